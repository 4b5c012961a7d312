package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"rewind/store"
	"rewind/store/internal/check"
)

// The tenants of store.Tenancy (graph_tenants, graph_thread_tenants).

var (
	_ store.Tenancy     = (*Store)(nil)
	_ store.SizeCounter = (*Store)(nil)
)

func (s *Store) Tenants(ctx context.Context) (_ []string, err error) {
	defer s.wrap(ctx, &err, "list tenants")
	rows, err := s.r.query(ctx, sqlTenants)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{store.DefaultTenant}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

func (s *Store) AddTenant(ctx context.Context, name string) (err error) {
	defer s.wrap(ctx, &err, "add tenant %v", check.Name(name))
	if err := store.CheckTenant(name); err != nil {
		return err
	}
	if name == store.DefaultTenant {
		return nil
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.end()
	if _, err := tx.in(sqlAddTenant).ExecContext(quiet(ctx), name); err != nil {
		return err
	}
	return tx.commit()
}

func (s *Store) ThreadTenant(ctx context.Context, thread string) (owner string, err error) {
	defer s.wrap(ctx, &err, "read the tenant of thread %v", check.Name(thread))
	brief, err := briefly(ctx)
	if err != nil {
		return "", err
	}
	err = s.r.queryRow(brief, sqlThreadTenant, []any{thread}, &owner)
	if errors.Is(err, sql.ErrNoRows) {
		return store.DefaultTenant, nil
	}
	return owner, err
}

// ClaimThread is one write transaction (BEGIN IMMEDIATE): no other writer
// of the file adds a row of the thread between the check and the claim.
func (s *Store) ClaimThread(ctx context.Context, thread, tenant string) (owner string, err error) {
	defer s.wrap(ctx, &err, "claim thread %v for tenant %v", check.Name(thread), check.Name(tenant))
	if err := check.Text("thread id", thread); err != nil {
		return "", err
	}
	if err := store.CheckTenant(tenant); err != nil {
		return "", err
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.end()
	ctx = quiet(ctx)
	if _, err := tx.in(sqlClaimThread).ExecContext(ctx, thread, tenant); err != nil {
		return "", err
	}
	err = tx.in(sqlThreadTenant).QueryRowContext(ctx, thread).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		owner, err = store.DefaultTenant, nil
	}
	if err != nil {
		return "", err
	}
	return owner, tx.commit()
}

func (s *Store) ThreadTenants(ctx context.Context) (_ map[string]string, err error) {
	defer s.wrap(ctx, &err, "list the tenants of threads")
	rows, err := s.r.query(ctx, sqlThreadTenants)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var th, owner string
		if err := rows.Scan(&th, &owner); err != nil {
			return nil, err
		}
		out[th] = owner
	}
	return out, rows.Err()
}
