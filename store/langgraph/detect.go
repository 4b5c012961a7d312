package langgraph

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

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
	// url is the spec itself, password and all, to connect with.
	url string
	// why a rewind kind is not a LangGraph database, for Open's error.
	why string
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
		return detectSQLite(ctx, where)
	case "postgres":
		return detectPostgres(ctx, where)
	}
	return Detected{Kind: KindRewind, Backend: backend, Where: "memory:", why: "is rewind's in-memory store"}, nil
}

// Open opens the LangGraph database a spec names, read-only. A rewind
// store, or anything else, is refused with the reason.
func Open(ctx context.Context, spec string) (Source, error) {
	d, err := Detect(ctx, spec)
	if err != nil {
		return nil, err
	}
	if d.Kind != KindLangGraph {
		return nil, fmt.Errorf("%s %s, not a LangGraph database: name a database LangGraph's SqliteSaver or PostgresSaver wrote", d.Where, d.why)
	}
	var db database
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
	return "", "", fmt.Errorf("unknown store %q: use sqlite:PATH or postgres://USER@HOST:PORT/DB", redact(spec))
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
