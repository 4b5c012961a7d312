-- Row-level security for tenants: a role named after a tenant reads and
-- writes that tenant's rows only, in every table of rewind's, whatever
-- SQL it sends. Run it once as the owner of rewind's tables, after rewind
-- created them (store schema 11 or later):
--
--   psql "$URL" -f store/postgres/rowsecurity.sql
--
-- then, for each tenant (added with `rewind tenant add acme`), a role by
-- its name with the privileges rewind needs:
--
--   create role acme login password '...';
--   grant usage on schema public to acme;
--   grant select, insert, update, delete on all tables in schema public to acme;
--
-- The policies bind every role but the tables' owner (and roles with
-- BYPASSRLS): rewind itself runs as the owner and keeps tenants apart on
-- its own (--tenant); a role of another name sees no thread at all. The
-- default tenant's threads are the owner's. Running it again is harmless.

-- The tenant a thread belongs to, read as the caller: a thread of another
-- tenant has no row the caller may see, so it reads as the default
-- tenant's, which no tenant role is.
create or replace function rewind_thread_tenant(thread text) returns text
language sql stable as $$
  select coalesce((select tenant from graph_thread_tenants where thread_id = thread), 'default')
$$;

-- Whether a thread holds no row in any table, read as the owner (the
-- caller sees none of another tenant's): a tenant role may claim only
-- such a thread, never take another tenant's or the default tenant's.
create or replace function rewind_thread_free(thread text) returns boolean
language sql stable security definer set search_path from current as $$
  select not exists (select 1 from graph_threads where thread_id = thread)
     and not exists (select 1 from graph_checkpoints where thread_id = thread)
     and not exists (select 1 from graph_drafts where thread_id = thread)
     and not exists (select 1 from graph_epochs where thread_id = thread)
     and not exists (select 1 from graph_messages where thread_id = thread)
$$;

alter table graph_thread_tenants enable row level security;
drop policy if exists rewind_tenant on graph_thread_tenants;
create policy rewind_tenant on graph_thread_tenants
  using (tenant = current_user) with check (tenant = current_user and rewind_thread_free(thread_id));

alter table graph_checkpoints enable row level security;
drop policy if exists rewind_tenant on graph_checkpoints;
create policy rewind_tenant on graph_checkpoints
  using (rewind_thread_tenant(thread_id) = current_user) with check (rewind_thread_tenant(thread_id) = current_user);

alter table graph_writes enable row level security;
drop policy if exists rewind_tenant on graph_writes;
create policy rewind_tenant on graph_writes
  using (rewind_thread_tenant(thread_id) = current_user) with check (rewind_thread_tenant(thread_id) = current_user);

alter table graph_events enable row level security;
drop policy if exists rewind_tenant on graph_events;
create policy rewind_tenant on graph_events
  using (rewind_thread_tenant(thread_id) = current_user) with check (rewind_thread_tenant(thread_id) = current_user);

alter table graph_messages enable row level security;
drop policy if exists rewind_tenant on graph_messages;
create policy rewind_tenant on graph_messages
  using (rewind_thread_tenant(thread_id) = current_user) with check (rewind_thread_tenant(thread_id) = current_user);

alter table graph_blobs enable row level security;
drop policy if exists rewind_tenant on graph_blobs;
create policy rewind_tenant on graph_blobs
  using (rewind_thread_tenant(thread_id) = current_user) with check (rewind_thread_tenant(thread_id) = current_user);

alter table graph_drafts enable row level security;
drop policy if exists rewind_tenant on graph_drafts;
create policy rewind_tenant on graph_drafts
  using (rewind_thread_tenant(thread_id) = current_user) with check (rewind_thread_tenant(thread_id) = current_user);

alter table graph_epochs enable row level security;
drop policy if exists rewind_tenant on graph_epochs;
create policy rewind_tenant on graph_epochs
  using (rewind_thread_tenant(thread_id) = current_user) with check (rewind_thread_tenant(thread_id) = current_user);

alter table graph_heads enable row level security;
drop policy if exists rewind_tenant on graph_heads;
create policy rewind_tenant on graph_heads
  using (rewind_thread_tenant(thread_id) = current_user) with check (rewind_thread_tenant(thread_id) = current_user);

alter table graph_threads enable row level security;
drop policy if exists rewind_tenant on graph_threads;
create policy rewind_tenant on graph_threads
  using (rewind_thread_tenant(thread_id) = current_user) with check (rewind_thread_tenant(thread_id) = current_user);

alter table graph_sizes enable row level security;
drop policy if exists rewind_tenant on graph_sizes;
create policy rewind_tenant on graph_sizes
  using (rewind_thread_tenant(thread_id) = current_user) with check (rewind_thread_tenant(thread_id) = current_user);
