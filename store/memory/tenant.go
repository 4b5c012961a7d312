package memory

import (
	"context"
	"slices"

	"rewind/store"
	"rewind/store/internal/check"
)

// The tenants of store.Tenancy: a set of names, and the owner of every
// thread a tenant other than the default claimed.

func (s *Store) Tenants(ctx context.Context) ([]string, error) {
	return read(s, ctx, func() ([]string, error) {
		names := []string{}
		for n := range s.tenants {
			names = append(names, n)
		}
		slices.Sort(names)
		return append([]string{store.DefaultTenant}, names...), nil
	}, "list tenants")
}

func (s *Store) AddTenant(ctx context.Context, name string) (err error) {
	defer wrap(&err, "add tenant %v", check.Name(name))
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := store.CheckTenant(name); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if name != store.DefaultTenant {
		s.tenants[name] = true
	}
	return nil
}

func (s *Store) ThreadTenant(ctx context.Context, thread string) (string, error) {
	return read(s, ctx, func() (string, error) { return s.owner(thread), nil }, "read the tenant of thread %v", check.Name(thread))
}

// owner is under s.mu.
func (s *Store) owner(thread string) string {
	if o, ok := s.owners[thread]; ok {
		return o
	}
	return store.DefaultTenant
}

func (s *Store) ClaimThread(ctx context.Context, thread, tenant string) (_ string, err error) {
	defer wrap(&err, "claim thread %v for tenant %v", check.Name(thread), check.Name(tenant))
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := check.Text("thread id", thread); err != nil {
		return "", err
	}
	if err := store.CheckTenant(tenant); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, claimed := s.owners[thread]
	if !claimed && s.threads[thread] == nil && s.drafts[thread] == nil && s.epochs[thread] == 0 {
		s.owners[thread] = tenant
	}
	return s.owner(thread), nil
}

func (s *Store) ThreadTenants(ctx context.Context) (map[string]string, error) {
	return read(s, ctx, func() (map[string]string, error) {
		out := make(map[string]string, len(s.owners))
		for th, o := range s.owners {
			out[th] = o
		}
		return out, nil
	}, "list the tenants of threads")
}
