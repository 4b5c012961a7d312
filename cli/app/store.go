package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"rewind/store"
	"rewind/store/backend"
	"rewind/store/browse"
	"rewind/store/langgraph"
)

// Store is a resolved store spec: `memory:`, `sqlite:PATH` or
// `postgres://…`, and the tenant whose threads its handles read and write.
type Store struct {
	Spec string
	// Tenant is $REWIND_TENANT (--tenant sets it, so the workers a
	// command starts inherit it); "" is store.DefaultTenant.
	Tenant string
}

// EnvTenant names the environment variable that says which tenant's
// threads a command reads and writes; --tenant sets it.
const EnvTenant = "REWIND_TENANT"

// ResolveStore picks the store: the --store flag when given, else
// $REWIND_STORE, else $DATABASE_URL, else the sqlite file under
// $XDG_STATE_HOME/rewind; and the tenant, $REWIND_TENANT.
func ResolveStore(flag string) Store {
	return Store{Spec: backend.Resolve(flag), Tenant: strings.TrimSpace(os.Getenv(EnvTenant))}
}

// ErrNoTenant is matched (errors.Is) by the refusal of a tenant the store
// does not know.
var ErrNoTenant = store.ErrNoTenant

// forTenant gives a store handle of the store's tenant: another tenant's
// threads are not found through it. A tenant the store does not know is
// refused in one line that names the fix, the store closed.
func (s Store) forTenant(ctx context.Context, st store.Store, err error) (store.Store, error) {
	if err != nil {
		return nil, err
	}
	t, err := store.ForTenant(ctx, st, s.Tenant)
	switch {
	case errors.Is(err, store.ErrNoTenant):
		st.Close()
		return nil, tenantError{fmt.Errorf("tenant %s does not exist in %s: %w: add it with `rewind tenant add %s`, or unset --tenant and $%s for the default tenant",
			store.Name(s.Tenant), s.Label(), store.ErrNoTenant, store.Name(s.Tenant), EnvTenant)}
	case errors.Is(err, store.ErrInvalid):
		st.Close()
		return nil, tenantError{fmt.Errorf("--tenant/$%s: %w", EnvTenant, err)}
	case err != nil:
		st.Close()
		return nil, err
	}
	return t, nil
}

// tenantError is a refused tenant as a usage error (exit 2).
type tenantError struct{ err error }

func (r tenantError) Error() string        { return r.err.Error() }
func (r tenantError) Unwrap() error        { return r.err }
func (r tenantError) Is(target error) bool { return target == ErrUsage }

// Label is the spec with any password hidden, for printing.
func (s Store) Label() string { return backend.Describe(s.Spec) }

// Shared says whether other processes (workers, drills) can open the same
// data; a memory: store lives and dies with this process.
func (s Store) Shared() bool { return s.Spec != "memory:" && s.Spec != "memory" }

// Open opens the store for a command that writes: rewind's opener creates
// a new store in an empty place and upgrades a store an older rewind
// wrote. Anything else (a LangGraph database, a database of another
// layout) is refused before rewind's opener touches it (see Writable).
func (s Store) Open(ctx context.Context) (store.Store, error) {
	d, h, err := s.detect(ctx)
	if err != nil {
		return nil, err
	}
	defer h.close()
	if err := s.refuseLangGraph(d); err != nil {
		return nil, err
	}
	st, err := s.open(ctx, h, max(d.Rewind, 0))
	return s.forTenant(ctx, st, err)
}

// open opens the store on the detection's connection when it holds one
// (PostgreSQL), else as backend.OpenDetected does.
func (s Store) open(ctx context.Context, h *held, schema int) (store.Store, error) {
	if c := h.take(); c != nil {
		return c.Open(ctx)
	}
	return openDetected(ctx, s.Spec, schema)
}

// connectPostgres and openDetected connect to a store; a test counts the
// connections a command makes through them.
var (
	connectPostgres = backend.Connect
	openDetected    = backend.OpenDetected
)

// OpenRead opens the store for a command that only reads, creating and
// migrating nothing: a rewind store of this rewind's schema opens as it
// is (rewind's opener writes nothing to one); an empty place (no file, an
// empty file or database) reads as an empty store, in memory, and stays
// empty; a store an older rewind wrote is refused (reading it would
// upgrade it), as is anything Writable refuses.
func (s Store) OpenRead(ctx context.Context) (store.Store, error) {
	d, h, err := s.detect(ctx)
	if err != nil {
		return nil, err
	}
	defer h.close()
	if err := s.refuseLangGraph(d); err != nil {
		return nil, err
	}
	switch current := backend.SchemaVersion(d.Backend); {
	case d.Rewind == 0:
		st, err := backend.Open(ctx, "memory:")
		return s.forTenant(ctx, st, err)
	case d.Rewind < 0:
		return nil, fmt.Errorf("%s %s: check that this user may read it, or name another store", s.Label(), d.Reason())
	case d.Rewind < current:
		return nil, fmt.Errorf("%s is %w (store schema %d; this rewind writes %d), which a command that only reads does not upgrade: open it once with a command that writes (rewind tui, rewind run) to upgrade it",
			s.Label(), ErrOlderStore, d.Rewind, current)
	}
	// Newer: refused there, unwritten; the version read once, here.
	st, err := s.open(ctx, h, d.Rewind)
	return s.forTenant(ctx, st, err)
}

// ErrOlderStore is matched (errors.Is) by OpenRead's refusal of a store
// an older rewind wrote.
var ErrOlderStore = errors.New("a store of an older rewind")

// Opener returns a function that opens fresh handles on the same data (a
// memory: store is shared, not reopened), and the cleanup to call after.
// Each handle is refused as Open refuses it.
func (s Store) Opener() (open func(context.Context) (store.Store, error), cleanup func()) {
	opener, cleanup := backend.Opener(s.Spec)
	return func(ctx context.Context) (store.Store, error) {
		if err := s.Writable(ctx); err != nil {
			return nil, err
		}
		st, err := opener(ctx)
		return s.forTenant(ctx, st, err)
	}, cleanup
}

// Writable refuses what rewind's opener must not touch: a LangGraph
// database (rewind's opener would create its own tables in it, and it
// only reads one, through OpenLangGraph), and a database that is neither
// rewind's nor a LangGraph layout rewind reads (a ShallowPostgresSaver's,
// a PostgresSaver's whose setup() stopped half way, tables of the same
// names with other columns, another app's SQLite file). The refusal
// matches ErrUsage (the --store given does not fit the command: exit 2).
// What it cannot reach is refused in rewind's opener's words.
func (s Store) Writable(ctx context.Context) error {
	d, h, err := s.detect(ctx)
	if err != nil {
		return err
	}
	h.close()
	return s.refuseLangGraph(d)
}

// detect tells what the spec names, reading nothing but what it must:
// any failure to tell is an error (a store rewind cannot see into is
// never handed to its opener), a server it cannot reach in rewind's
// opener's words. On PostgreSQL it reads on the store's own first
// connection, which it holds for the opener (held.take) and the caller
// closes after (held.close): one connection a command, not two; on a
// LangGraph SQLite file it keeps the handle it read on, for
// OpenLangGraph (held.close releases it when none took it). A
// detection Detected carried in ctx is its own, and its held connection
// the caller of Detected's (close leaves it).
func (s Store) detect(ctx context.Context) (langgraph.Detected, *held, error) {
	if at, ok := ctx.Value(detectedKey{}).(detectedAt); ok && at.spec == s.Spec {
		return at.d, &held{shared: at.h}, nil
	}
	if backend.Kind(s.Spec) == "postgres" {
		return s.detectPostgres(ctx)
	}
	d, err := langgraph.DetectKeeping(ctx, s.Spec) // a LangGraph file's handle, for OpenLangGraph
	if err != nil {
		return d, nil, s.detectError(ctx, err)
	}
	return d, &held{release: d.Release}, nil
}

// detectPostgres is detect on the connection the store opens on.
func (s Store) detectPostgres(ctx context.Context) (langgraph.Detected, *held, error) {
	if err := langgraph.CheckPostgresURL(s.Spec); err != nil {
		return langgraph.Detected{}, nil, err // in Detect's words
	}
	c, err := connectPostgres(ctx, s.Spec) // fails in the opener's words
	if err != nil {
		return langgraph.Detected{}, nil, err
	}
	d, err := langgraph.DetectPostgres(ctx, s.Spec, c.Pool())
	if err != nil {
		c.Close()
		return d, nil, s.detectError(ctx, err)
	}
	return d, &held{conn: c}, nil
}

// detectError is a detection's error as detect returns it.
func (s Store) detectError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, langgraph.ErrUnreachable):
		if rerr := backend.Reach(ctx, s.Spec); rerr != nil {
			return rerr
		}
	case errors.Is(err, langgraph.ErrNeither):
		return refusal{err}
	}
	return err
}

// held is the connection a detection made, until an opener takes it.
// shared is a Detected context's: taken from there, closed by its owner.
// release closes a LangGraph SQLite file's handle the detection kept,
// unless langgraph.OpenDetected took it.
type held struct {
	mu      sync.Mutex
	conn    *backend.Conn
	shared  *held
	release func()
}

// take is the connection for the opener to own, nil when there is none
// (not PostgreSQL, or taken already: the opener connects again).
func (h *held) take() *backend.Conn {
	switch {
	case h == nil:
		return nil
	case h.shared != nil:
		return h.shared.take()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.conn
	h.conn = nil
	return c
}

// close closes the connection when no opener took it; a shared one is
// left to Detected's release.
func (h *held) close() {
	if h == nil || h.shared != nil {
		return
	}
	if c := h.take(); c != nil {
		c.Close()
	}
	if h.release != nil {
		h.release()
	}
}

// detectedKey carries a detection in a context (Detected).
type detectedKey struct{}

type detectedAt struct {
	spec string
	d    langgraph.Detected
	h    *held
}

// Detected tells what the spec names once, for the openers a read command
// calls next in the context it returns (OpenLangGraph, then OpenRead):
// each told it again, and a detection opens the file and reads its
// schema, a few ms of a command's new process (on PostgreSQL, a
// connection the first of them that opens rewind's store opens on).
// What it cannot tell is its error, as the openers would say it. Call
// release when done with the openers: it closes the connection none took.
func (s Store) Detected(ctx context.Context) (_ context.Context, release func(), _ error) {
	d, h, err := s.detect(ctx)
	if err != nil {
		return ctx, func() {}, err
	}
	if h == nil {
		h = &held{}
	}
	return context.WithValue(ctx, detectedKey{}, detectedAt{s.Spec, d, h}), h.close, nil
}

func (s Store) refuseLangGraph(d langgraph.Detected) error {
	if d.Kind != langgraph.KindLangGraph {
		return nil
	}
	return usageError(fmt.Sprintf("%s is %s, which rewind opens read-only: this command needs a rewind store (give one with --store); read the LangGraph database with `rewind threads`, `log`, `show`, `events`, `diff`, `search` or `tui`",
		s.Label(), d.What()))
}

// OpenLangGraph opens the store read-only when it is a LangGraph database;
// nil, nil when it is rewind's (or a place for one: open it with Open or
// OpenRead). Anything else is refused, as Writable refuses it. Close the
// source when done.
func (s Store) OpenLangGraph(ctx context.Context) (browse.Source, error) {
	d, h, err := s.detect(ctx)
	defer h.close()
	if err != nil || d.Kind != langgraph.KindLangGraph {
		return nil, err
	}
	if c := h.take(); c != nil { // read-only on the detection's connection: one session a command
		return langgraph.OpenPostgresOn(ctx, d, c.Pool())
	}
	return langgraph.OpenDetected(ctx, d) // on the detection's handle of a SQLite file, which it takes
}

// refusal is Detect's ErrNeither as a usage error (exit 2).
type refusal struct{ err error }

func (r refusal) Error() string        { return r.err.Error() }
func (r refusal) Unwrap() error        { return r.err }
func (r refusal) Is(target error) bool { return target == ErrUsage }
