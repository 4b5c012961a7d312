-- rewind store schema, version 13: Size as a running total, a row a
-- thread, counted once here from the rows (sizeRowsSQL's rule) and kept by
-- every write in its statement: Size read every row of the thread, and a
-- 5,000-turn bench spent most of its time in it after each turn. Not the
-- head snapshot's bytes, which Size reads: graph_heads is unlogged, and a
-- crash of the server empties it. No foreign key: it goes with its
-- thread in DeleteThread's statement.
create table graph_sizes (
  thread_id text primary key,
  bytes bigint not null
);
insert into graph_sizes (thread_id, bytes)
select thread_id, sum(n) from (
  select thread_id, octet_length(thread_id) + octet_length(state::text) + coalesce(octet_length(meta::text), 0)
    + coalesce(octet_length(rebased::text), 0) + 5*8 + coalesce((select sum(octet_length(r)) from unnest(blob_refs) r), 0) as n
  from graph_checkpoints
  union all select thread_id, octet_length(thread_id) + octet_length(type) + octet_length(payload::text) + 3*8 from graph_events
  union all select thread_id, octet_length(thread_id) + octet_length(task_id) + octet_length(writes::text) + 2*8 from graph_writes
  union all select thread_id, octet_length(thread_id) + octet_length(hash) + octet_length(body) + 3*8 from graph_messages
  union all select thread_id, octet_length(thread_id) + octet_length(hash) + octet_length(body) + 8 from graph_blobs
  union all select thread_id, octet_length(thread_id) + octet_length(operation_id) + octet_length(body::text) + 8 from graph_drafts
  union all select thread_id, octet_length(thread_id) + 2*8 from graph_epochs
) rows
group by thread_id;
