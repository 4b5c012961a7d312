package app

import (
	"context"

	"rewind/store"
	"rewind/store/backend"
)

// Store is a resolved store spec: `memory:`, `sqlite:PATH` or
// `postgres://…`.
type Store struct{ Spec string }

// ResolveStore picks the store: the --store flag when given, else
// $REWIND_STORE, else $DATABASE_URL, else the sqlite file under
// $XDG_STATE_HOME/rewind.
func ResolveStore(flag string) Store { return Store{backend.Resolve(flag)} }

// Label is the spec with any password hidden, for printing.
func (s Store) Label() string { return backend.Describe(s.Spec) }

// Shared says whether other processes (workers, drills) can open the same
// data; a memory: store lives and dies with this process.
func (s Store) Shared() bool { return s.Spec != "memory:" && s.Spec != "memory" }

// Open opens the store.
func (s Store) Open(ctx context.Context) (store.Store, error) { return backend.Open(ctx, s.Spec) }

// Opener returns a function that opens fresh handles on the same data (a
// memory: store is shared, not reopened), and the cleanup to call after.
func (s Store) Opener() (open func(context.Context) (store.Store, error), cleanup func()) {
	return backend.Opener(s.Spec)
}
