-- rewind store schema, version 3: writer epochs for takeovers.
-- Fence increments a thread's epoch; a write carrying a lower epoch comes
-- from a writer that was taken over and is refused inside its own
-- transaction, which holds this row FOR SHARE so a Fence cannot slip in
-- between the check and the COMMIT.
create table graph_epochs (
  thread_id text collate "C" primary key,
  epoch     bigint           not null,
  fenced_at timestamptz      not null default now()
);
