-- rewind store schema, version 2: side effects (seed 002).
-- One row per draft a side-effecting tool made, keyed by the operation id
-- the engine records in a checkpoint before the call, so that a retry after
-- a crash finds the draft instead of making a second one. No foreign key to
-- graph_checkpoints: a draft outlives a pruned checkpoint; deleting the
-- thread deletes its drafts.
create table graph_drafts (
  thread_id    text collate "C" not null,
  operation_id text collate "C" not null,
  body         jsonb            not null,
  created_at   timestamptz      not null default now(),
  primary key (thread_id, operation_id)
);
