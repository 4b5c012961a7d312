package langgraph

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"rewind/store"
	"rewind/store/browse"
)

// What a store spec names.
const (
	// KindRewind: a rewind store, or a place where rewind's opener makes
	// one (a missing or empty SQLite file, a PostgreSQL database without
	// LangGraph's tables, memory:).
	KindRewind = browse.KindRewind
	// KindLangGraph (declared with the reader): LangGraph's checkpoint
	// tables, which Open reads.
)

// ErrNeither is matched (errors.Is) when a spec names a database that
// holds neither a rewind store nor LangGraph's checkpoint tables.
var ErrNeither = errors.New("neither a rewind store nor a LangGraph checkpoint database")

// neither is an error matching ErrNeither that says only what was found.
type neither string

func (n neither) Error() string        { return string(n) }
func (n neither) Is(target error) bool { return target == ErrNeither }

// ErrUnreachable is matched (errors.Is) when Detect could not connect to
// the database a spec names, so it cannot tell what is there.
var ErrUnreachable = errors.New("cannot connect")

// Detected says what a store spec names.
type Detected struct {
	// Kind is KindRewind or KindLangGraph.
	Kind string `json:"kind"`
	// Backend is "memory", "sqlite" or "postgres".
	Backend string `json:"backend"`
	// Where is the file, or the URL without its password.
	Where string `json:"where"`
	// Schema describes LangGraph's tables as found.
	Schema string `json:"schema,omitempty"`
	// Rewind is the store schema version of the rewind store found: 0
	// when there is none (a place where rewind's opener makes one), -1
	// when it is there but its version could not be read.
	Rewind int `json:"rewind,omitempty"`
	// Shallow: LangGraph's ShallowPostgresSaver tables, which keep only
	// the newest checkpoint of each thread and namespace.
	Shallow bool `json:"shallow,omitempty"`
	// url is the spec itself, password and all, to connect with.
	url string
	// why a rewind kind is not a LangGraph database, for Open's error.
	why string
	// kept is the handle DetectKeeping read a LangGraph SQLite file on,
	// for OpenDetected to read on (nil: none kept).
	kept *keptDB
}

// keptDB is a detection's handle on a LangGraph SQLite file, open until
// OpenDetected takes it or Release closes it: the reader opens the file
// as the detection did (openMode), so its connection, and its parse of
// the file's schema, serve both.
type keptDB struct {
	mu   sync.Mutex
	db   *sql.DB
	mode string
}

// take is the kept handle for its taker to own (nil: none, or taken).
func (k *keptDB) take() (*sql.DB, string) {
	if k == nil {
		return nil, ""
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	db, mode := k.db, k.mode
	k.db = nil
	return db, mode
}

// DetectKeeping is Detect that keeps the handle it read a LangGraph
// SQLite file on, for OpenDetected of what it returns: a read command
// opens the file once. Call Release once the openers are done.
func DetectKeeping(ctx context.Context, spec string) (Detected, error) {
	backend, where, err := parseSpec(spec)
	if err != nil || backend != "sqlite" {
		return Detect(ctx, spec)
	}
	return detectSQLite(ctx, where, true)
}

// Release closes the handle DetectKeeping kept, unless OpenDetected took
// it.
func (d Detected) Release() {
	if db, _ := d.kept.take(); db != nil {
		db.Close()
	}
}

// Detect tells what a spec (memory:, sqlite:PATH, PATH.db, postgres://…)
// names, reading and never writing: a LangGraph database, a rewind store
// (or a place for a new one), or neither (an error matching ErrNeither).
// A database that cannot be read is an error saying why.
func Detect(ctx context.Context, spec string) (Detected, error) {
	backend, where, err := parseSpec(spec)
	if err != nil {
		return Detected{}, err
	}
	switch backend {
	case "sqlite":
		return detectSQLite(ctx, where, false)
	case "postgres":
		return detectPostgres(ctx, where)
	}
	return Detected{Kind: KindRewind, Backend: backend, Where: "memory:", why: "is rewind's in-memory store"}, nil
}

// Open opens the LangGraph database a spec names, read-only. A rewind
// store, or anything else, is refused with the reason.
func Open(ctx context.Context, spec string) (Source, error) {
	d, err := DetectKeeping(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	return OpenDetected(ctx, d)
}

// OpenDetected is Open of what Detect (or DetectPostgres, or
// DetectKeeping, whose handle it reads on) told just before, not told
// again: a LangGraph database opens read-only, anything else is refused
// with the reason.
func OpenDetected(ctx context.Context, d Detected) (Source, error) {
	if d.Kind != KindLangGraph {
		return nil, fmt.Errorf("%s %s, not a LangGraph database: name a database LangGraph's SqliteSaver or PostgresSaver wrote", d.Where, d.why)
	}
	var db database
	var err error
	switch d.Backend {
	case "sqlite":
		db, err = openSQLite(ctx, d)
	default:
		db, err = openPostgres(ctx, d)
	}
	if err != nil {
		return nil, err
	}
	return &reader{db: db}, nil
}

// Reason says what the spec names when it is not a LangGraph database
// ("is a rewind store", "does not exist", …), after its Where.
func (d Detected) Reason() string { return d.why }

// What says what was found, for a refusal: "a LangGraph
// ShallowPostgresSaver database: it keeps only the newest checkpoint of
// each thread", "a LangGraph database (LangGraph SqliteSaver tables …)",
// "a rewind store", "nothing yet" (a place for a new store).
func (d Detected) What() string {
	switch {
	case d.Kind == KindLangGraph && d.Shallow:
		return "a LangGraph ShallowPostgresSaver database: it keeps only the newest checkpoint of each thread"
	case d.Kind == KindLangGraph:
		return "a LangGraph database (" + d.Schema + ")"
	case d.Rewind != 0:
		return "a rewind store"
	}
	return "nothing yet"
}

// orNone is err's text, or "no version recorded" for none.
func orNone(err error) string {
	if err == nil {
		return "no version recorded"
	}
	return err.Error()
}

// parseSpec reads a spec the way rewind's opener does.
func parseSpec(spec string) (backend, where string, err error) {
	spec = strings.TrimSpace(spec)
	if path, ok, err := store.SQLiteFile(spec); ok || err != nil {
		return "sqlite", path, err
	}
	switch {
	case spec == "memory:" || spec == "memory":
		return "memory", "", nil
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		return "postgres", spec, nil
	}
	return "", "", fmt.Errorf("unknown store %q: use memory:, sqlite:PATH or postgres://USER@HOST:PORT/DB", redact(spec))
}

// redact prints a URL with its password masked.
func redact(spec string) string {
	if u, err := url.Parse(spec); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	return spec
}
