-- rewind store schema, version 8: the head snapshot (store.Checkpoint.Head).
-- One row a thread, replaced by the put of a newer checkpoint that has
-- one: the newest state whole, so a new process reads it in one row. A
-- cache of what its chain reads: no foreign key; it goes with its thread
-- (DeleteThread) and with any prune.
create table graph_heads (
  thread_id text primary key,
  checkpoint_id bigint not null,
  doc json not null
);
