package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"rewind/store"
	"rewind/store/internal/check"
)

// The tenants of store.Tenancy (graph_tenants, graph_thread_tenants).

var _ store.Tenancy = (*Store)(nil)

func (s *Store) Tenants(ctx context.Context) (_ []string, err error) {
	defer s.fail(&err, "list tenants")
	rows, err := s.pool.Query(ctx, `select name from graph_tenants order by name`)
	if err != nil {
		return nil, s.db(err)
	}
	defer rows.Close()
	out := []string{store.DefaultTenant}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, s.db(err)
		}
		out = append(out, n)
	}
	return out, s.db(rows.Err())
}

func (s *Store) AddTenant(ctx context.Context, name string) (err error) {
	defer s.fail(&err, "add tenant %v", check.Name(name))
	if err := store.CheckTenant(name); err != nil {
		return err
	}
	if name == store.DefaultTenant {
		return nil
	}
	_, err = s.pool.Exec(ctx, `insert into graph_tenants (name) values ($1) on conflict do nothing`, name)
	return s.db(err)
}

func (s *Store) ThreadTenant(ctx context.Context, thread string) (owner string, err error) {
	defer s.fail(&err, "read the tenant of thread %v", check.Name(thread))
	if check.Text("thread id", thread) != nil {
		return store.DefaultTenant, nil // no such thread; the call it checks refuses the id
	}
	q := `select tenant from graph_thread_tenants where thread_id = $1`
	err = s.pool.QueryRow(ctx, q, s.unprepared(q, thread)...).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.DefaultTenant, nil
	}
	return owner, s.db(err)
}

// claimSQL takes an unclaimed thread that holds no row, and reads the
// owner; the key holds off a racing claim.
const claimSQL = `
with ins as (
  insert into graph_thread_tenants (thread_id, tenant)
  select $1, $2
  where not exists (select 1 from graph_threads where thread_id = $1)
    and not exists (select 1 from graph_drafts where thread_id = $1)
    and not exists (select 1 from graph_epochs where thread_id = $1)
  on conflict (thread_id) do nothing
  returning tenant
)
select coalesce((select tenant from ins), (select tenant from graph_thread_tenants where thread_id = $1), 'default')`

func (s *Store) ClaimThread(ctx context.Context, thread, tenant string) (owner string, err error) {
	defer s.fail(&err, "claim thread %v for tenant %v", check.Name(thread), check.Name(tenant))
	if err := check.Text("thread id", thread); err != nil {
		return "", err
	}
	if err := store.CheckTenant(tenant); err != nil {
		return "", err
	}
	err = s.pool.QueryRow(ctx, claimSQL, thread, tenant).Scan(&owner)
	return owner, s.db(err)
}

func (s *Store) ThreadTenants(ctx context.Context) (_ map[string]string, err error) {
	defer s.fail(&err, "list the tenants of threads")
	rows, err := s.pool.Query(ctx, `select thread_id, tenant from graph_thread_tenants`)
	if err != nil {
		return nil, s.db(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var th, owner string
		if err := rows.Scan(&th, &owner); err != nil {
			return nil, s.db(err)
		}
		out[th] = owner
	}
	return out, s.db(rows.Err())
}
