-- rewind store schema, version 5: long conversations.
-- A checkpoint may hold only what changed since its parent (base false);
-- Chain reads back to the nearest base. Rows written before this version
-- hold whole states, hence base defaults to true: adding a column with a
-- constant default rewrites nothing, so the upgrade is instant however
-- large the table. meta is the small document History lists instead of
-- state (null for old rows). rebased is the self-contained state Prune
-- stores for a kept delta whose parent it deletes. blob_refs are the
-- hashes of the blobs the row refers to, so Prune can free the others.
alter table graph_checkpoints add column meta jsonb;
alter table graph_checkpoints add column base boolean not null default true;
alter table graph_checkpoints add column rebased jsonb;
alter table graph_checkpoints add column blob_refs text[];
-- The raw transcript: each message once per thread, by content hash. Bodies
-- are text, not jsonb, so they come back byte for byte (and keep \u0000).
-- No foreign key to graph_checkpoints: messages outlive pruned checkpoints;
-- checkpoint_id is the checkpoint whose put stored the message first.
create table graph_messages (
  thread_id     text collate "C" not null,
  hash          text collate "C" not null,
  idx           bigint           not null,
  body          text             not null,
  checkpoint_id bigint           not null,
  created_at    timestamptz      not null default now(),
  primary key (thread_id, hash)
);
-- MessagesAt: every branch's message at one index.
create index graph_messages_idx on graph_messages (thread_id, idx);
-- Large values shared by the checkpoints that refer to them, once per
-- thread by content hash; Prune deletes those no checkpoint refers to.
create table graph_blobs (
  thread_id  text collate "C" not null,
  hash       text collate "C" not null,
  body       text             not null,
  created_at timestamptz      not null default now(),
  primary key (thread_id, hash)
);
