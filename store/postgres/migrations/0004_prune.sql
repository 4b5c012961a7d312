-- rewind store schema, version 4: retention (Store.Prune).
-- Prune deletes old checkpoints with their writes and events. A kept
-- checkpoint whose parent it deleted is re-rooted: parent_id becomes null
-- and rerooted_from keeps the parent it had, so psql shows why the chain
-- starts there. It stays null for every other checkpoint.
alter table graph_checkpoints add column rerooted_from bigint;
-- Children by parent. Deleting a checkpoint checks the parent foreign key
-- (is anything still its child?); without this index each check scans the
-- thread, and pruning 9,900 of 10,000 checkpoints took 5.7 s instead of
-- a fraction of a second. Re-rooting finds the orphans with it too.
create index graph_checkpoints_parent on graph_checkpoints (thread_id, parent_id);
