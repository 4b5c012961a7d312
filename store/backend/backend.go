// Package backend turns a store spec (`memory:`, `sqlite:PATH`,
// `postgres://…`) into an open store, so every command and the TUI choose
// their store the same way.
package backend

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"rewind/store"
	"rewind/store/memory"
	"rewind/store/postgres"
	pgfloor "rewind/store/postgres/floor"
	"rewind/store/sqlite"
	sqlitefloor "rewind/store/sqlite/floor"
)

// Resolve picks the spec: the flag when given, else $REWIND_STORE, else
// $DATABASE_URL, else the sqlite file under the user's state directory.
func Resolve(flag string) string {
	for _, s := range []string{flag, os.Getenv("REWIND_STORE"), os.Getenv("DATABASE_URL")} {
		if strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return "sqlite:" + DefaultPath()
}

// DefaultPath is $XDG_STATE_HOME/rewind/rewind.db (~/.local/state when unset).
func DefaultPath() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			home = os.TempDir()
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "rewind", "rewind.db")
}

// Kinds are the backends Open opens, by the names tests and reports use.
// Every test helper that runs on every store ranges over
// backendtest.All, which a test holds to this list.
var Kinds = []string{"memory", "sqlite", "postgres"}

// Kind is which of Kinds a spec names ("" for none): what Open opens.
// A spec meant for SQLite but badly written is "sqlite" (Open says why).
func Kind(spec string) string {
	if _, ok, err := store.SQLiteFile(spec); ok || err != nil {
		return "sqlite"
	}
	switch {
	case spec == "memory:" || spec == "memory":
		return "memory"
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		return "postgres"
	}
	return ""
}

// Open opens the store a spec names. A SQLite spec is read by
// store.SQLiteFile: file: URIs mean what SQLite means, and SQLite's
// parameters are refused.
func Open(ctx context.Context, spec string) (store.Store, error) {
	return OpenDetected(ctx, spec, 0)
}

// OpenDetected is Open of a store whose schema version the caller read
// just before (langgraph.Detect's Rewind): a SQLite store's opener does
// not read it again. 0 is Open.
func OpenDetected(ctx context.Context, spec string, schema int) (store.Store, error) {
	switch Kind(spec) {
	case "sqlite":
		path, _, err := store.SQLiteFile(spec)
		if err != nil {
			return nil, err
		}
		sync, err := SQLiteSync()
		if err != nil {
			return nil, err
		}
		return orNil(sqlite.Open(ctx, path, sqlite.WithSync(sync), sqlite.WithSchema(schema)))
	case "memory":
		return memory.New(), nil
	case "postgres":
		return orNil(postgres.Open(ctx, spec))
	}
	return nil, fmt.Errorf("unknown store %q: use memory:, sqlite:PATH or postgres://USER@HOST:PORT/DB", Describe(spec))
}

// SyncEnv names the environment variable that says how SQLite stores
// commit: full (the default) or normal. `--sqlite-sync` sets it, so a
// worker or drill process the command starts opens the store the same way.
const SyncEnv = "REWIND_SQLITE_SYNC"

// SQLiteSync is how the SQLite stores Open opens commit: $REWIND_SQLITE_SYNC,
// else sqlite.SyncFull (commits fsynced).
func SQLiteSync() (sqlite.Sync, error) {
	v := os.Getenv(SyncEnv)
	if strings.TrimSpace(v) == "" {
		return sqlite.SyncFull, nil
	}
	y, err := sqlite.ParseSync(v)
	if err != nil {
		return "", fmt.Errorf("$%s: %w", SyncEnv, err)
	}
	return y, nil
}

// Durability says how a store's commits reach the disk, for reports
// (rewind bench): "" when there is nothing to choose.
func Durability(st store.Store) string {
	switch s := store.Unwrap(st).(type) {
	case *sqlite.Store:
		if s.Sync() == sqlite.SyncNormal {
			return "--sqlite-sync normal, commits not fsynced: an OS crash or power cut may lose the last ones"
		}
		return "--sqlite-sync full, commits fsynced (a run's together, when it releases the thread)"
	case *memory.Store, keepOpen:
		return "memory, nothing outlives the process"
	}
	return ""
}

// A Floor keeps what a store's runs stored as a bare program would
// (store/sqlite/floor, store/postgres/floor): what `rewind bench` writes
// each turn's rows into, to time a turn against the least its rows cost.
type Floor interface {
	Checkpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) error
	Writes(ctx context.Context, w store.TaskWrites) error
	Sync() error
	// Remove deletes the floor (its file, its schema).
	Remove() error
}

// NewFloor makes the floor of st: a SQLite file beside its file, durable
// as the store is, or a schema of its own in a PostgreSQL store's
// database. ok is false for the memory store. The caller removes it.
func NewFloor(ctx context.Context, st store.Store) (f Floor, ok bool, err error) {
	switch s := store.Unwrap(st).(type) {
	case *sqlite.Store:
		path := filepath.Join(filepath.Dir(s.File()), fmt.Sprintf(".rewind-floor-%d-%d.db", os.Getpid(), time.Now().UnixNano()))
		f, err := sqlitefloor.Create(ctx, path, s.Sync() != sqlite.SyncNormal)
		return f, err == nil, err
	case *postgres.Store:
		f, err := pgfloor.Create(ctx, s.Pool())
		return f, err == nil, err
	}
	return nil, false, nil
}

// orNil keeps a failed open from becoming a non-nil interface holding a nil
// pointer.
func orNil[S store.Store](s S, err error) (store.Store, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Opener returns a function that opens fresh handles on the spec's data.
// For memory: every call returns the same store (a memory store cannot be
// reopened); closing it is left to the caller of the returned cleanup.
func Opener(spec string) (open func(context.Context) (store.Store, error), cleanup func()) {
	if spec == "memory:" || spec == "memory" {
		shared := memory.New()
		return func(context.Context) (store.Store, error) { return keepOpen{shared}, nil }, func() { _ = shared.Close() }
	}
	return func(ctx context.Context) (store.Store, error) { return Open(ctx, spec) }, func() {}
}

// keepOpen embeds the concrete store, not the interface, so that its
// optional interfaces (store.Drafts, SetTxHook) stay visible to callers.
type keepOpen struct{ *memory.Store }

func (keepOpen) Close() error { return nil }

// Describe prints a spec with any password redacted.
func Describe(spec string) string {
	u, err := url.Parse(spec)
	if err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	if err != nil {
		// A URL that does not parse (a bad port, say) may still hold a
		// password: hide what lies between "USER:" and the last "@".
		if i := strings.Index(spec, "://"); i >= 0 {
			rest := spec[i+3:]
			if at := strings.LastIndex(rest, "@"); at >= 0 {
				if colon := strings.Index(rest[:at], ":"); colon >= 0 {
					return spec[:i+3] + rest[:colon+1] + "xxxxx" + rest[at:]
				}
			}
		}
	}
	return spec
}

// Conn is a PostgreSQL store's first connection, made before the store
// opens (Connect), so that what the database holds is read on it and the
// store then opens on it: a read command connected twice (0.47 s where
// one connection takes 0.25).
type Conn struct{ pg *postgres.Conn }

// Connect connects to a postgres:// spec's database as Open would,
// creating and migrating nothing; its error is Open's for a failed
// connect. Close the Conn, or Open it.
func Connect(ctx context.Context, spec string) (*Conn, error) {
	c, err := postgres.Connect(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &Conn{c}, nil
}

// Pool is the connection's pool, for reads before the store opens.
func (c *Conn) Pool() *pgxpool.Pool { return c.pg.Pool() }

// Open opens the store on the connection, which it owns from then on.
func (c *Conn) Open(ctx context.Context) (store.Store, error) { return orNil(c.pg.Open(ctx)) }

// Close closes a connection not opened as a store.
func (c *Conn) Close() { c.pg.Close() }
