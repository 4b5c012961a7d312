-- rewind store schema, version 1.
-- Every statement ends with ';' at the end of a line: the migrator splits on
-- that and sends each statement on its own (extended protocol, one at a time).
-- Text keys use the "C" collation so ORDER BY gives the same byte order as Go.

-- One row per checkpoint: the seed's table, with numeric ids.
create table graph_checkpoints (
  thread_id     text collate "C" not null,
  checkpoint_id bigint           not null,
  parent_id     bigint,
  state         jsonb            not null,
  created_at    timestamptz      not null default now(),
  primary key (thread_id, checkpoint_id),
  foreign key (thread_id, parent_id) references graph_checkpoints (thread_id, checkpoint_id)
);

-- Pending writes: one row per finished task of the superstep that runs from
-- checkpoint_id.
create table graph_writes (
  thread_id     text collate "C" not null,
  checkpoint_id bigint           not null,
  task_id       text collate "C" not null,
  writes        jsonb            not null,
  created_at    timestamptz      not null default now(),
  primary key (thread_id, checkpoint_id, task_id),
  foreign key (thread_id, checkpoint_id) references graph_checkpoints on delete cascade
);

-- Events committed with their checkpoint, ordered by seq within it.
create table graph_events (
  thread_id     text collate "C" not null,
  checkpoint_id bigint           not null,
  seq           integer          not null,
  type          text             not null,
  payload       jsonb            not null,
  created_at    timestamptz      not null default now(),
  primary key (thread_id, checkpoint_id, seq),
  foreign key (thread_id, checkpoint_id) references graph_checkpoints on delete cascade
);
