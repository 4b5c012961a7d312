package app

import (
	"context"
	"fmt"

	"rewind/store"
	"rewind/store/backend"
	"rewind/store/browse"
	"rewind/store/langgraph"
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

// Open opens the store. A LangGraph database is refused before rewind's
// opener touches it (see Writable).
func (s Store) Open(ctx context.Context) (store.Store, error) {
	if err := s.Writable(ctx); err != nil {
		return nil, err
	}
	return backend.Open(ctx, s.Spec)
}

// Opener returns a function that opens fresh handles on the same data (a
// memory: store is shared, not reopened), and the cleanup to call after.
// Each handle is refused on a LangGraph database, as Open refuses it.
func (s Store) Opener() (open func(context.Context) (store.Store, error), cleanup func()) {
	opener, cleanup := backend.Opener(s.Spec)
	return func(ctx context.Context) (store.Store, error) {
		if err := s.Writable(ctx); err != nil {
			return nil, err
		}
		return opener(ctx)
	}, cleanup
}

// Writable refuses a LangGraph database: rewind's opener would create its
// own tables in it (PostgreSQL: migrate them in), and it only reads one,
// through OpenLangGraph. The refusal matches ErrUsage (the --store given
// does not fit the command: exit 2). Anything Detect cannot tell is left
// to rewind's opener, which says what is wrong with it.
func (s Store) Writable(ctx context.Context) error {
	d, err := langgraph.Detect(ctx, s.Spec)
	if err != nil || d.Kind != langgraph.KindLangGraph {
		return nil
	}
	return usageError(fmt.Sprintf("%s is a LangGraph database (%s), which rewind opens read-only: this command needs a rewind store (give one with --store); read the LangGraph database with `rewind threads`, `log`, `show`, `events` or `diff`",
		s.Label(), d.Schema))
}

// OpenLangGraph opens the store read-only when it is a LangGraph database;
// nil, nil when it is not (open it with Open). Close the source when done.
func (s Store) OpenLangGraph(ctx context.Context) (browse.Source, error) {
	d, err := langgraph.Detect(ctx, s.Spec)
	if err != nil || d.Kind != langgraph.KindLangGraph {
		return nil, nil
	}
	return langgraph.Open(ctx, s.Spec)
}
