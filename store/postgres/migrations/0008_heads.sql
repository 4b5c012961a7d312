-- rewind store schema, version 8: the head snapshot (store.Checkpoint.Head).
-- One row a thread, replaced by the put of a newer checkpoint that has
-- one: the newest state whole, so a new process reads it in one row. A
-- cache of what its chain reads: no foreign key; it goes with its thread
-- (DeleteThread) and with any prune. Unlogged: it writes no WAL (a turn
-- stores its ~8 KB without it), and a crash empties it, which a cache
-- may (the chain reads the same; the next run writes it again).
create unlogged table graph_heads (
  thread_id text primary key,
  checkpoint_id bigint not null,
  doc json not null
);
