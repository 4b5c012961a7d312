-- rewind store schema, version 10: a row a thread with what Threads
-- lists (its checkpoints, its newest and that one's created_at), kept by
-- the statements that add and delete checkpoints (a put, Prune,
-- DeleteThread) in their transactions: counting the checkpoints at every
-- listing read every row of graph_checkpoints. No foreign key: it goes
-- with its thread in DeleteThread's statement.
create table graph_threads (
  thread_id text primary key,
  checkpoints bigint not null,
  latest_id bigint not null,
  updated_at timestamp with time zone not null
);
insert into graph_threads (thread_id, checkpoints, latest_id, updated_at)
select c.thread_id, c.n, c.latest, g.created_at
from (select thread_id, count(*) as n, max(checkpoint_id) as latest from graph_checkpoints group by thread_id) c
join graph_checkpoints g on g.thread_id = c.thread_id and g.checkpoint_id = c.latest;
