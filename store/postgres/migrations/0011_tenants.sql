-- rewind store schema, version 11: tenants (store.Tenancy). The tenants
-- the store knows, and the owner of every thread a tenant other than the
-- default claimed: a thread without a row here is the default tenant's,
-- so the rows of the stores before are the default tenant's as they
-- stand, and a default tenant's put writes nothing more.
create table graph_tenants (
  name text collate "C" primary key
);
create table graph_thread_tenants (
  thread_id text collate "C" primary key,
  tenant text not null
);
