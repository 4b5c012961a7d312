-- rewind store schema, version 6: one epoch counter for the store.
-- Fence hands out the next epoch of this counter, so an epoch is never
-- handed out twice: not to another thread, and not to a thread id that
-- DeleteThread removed (with its row of graph_epochs) and that is used
-- again, whose old writers must stay fenced. One row; it starts above
-- every epoch handed out so far.
create table graph_epoch_counter (
  issued bigint not null
);
insert into graph_epoch_counter (issued) select coalesce(max(epoch), 0) from graph_epochs;
