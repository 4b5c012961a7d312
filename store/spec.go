package store

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// SQLiteFile reads the SQLite part of a store spec, as rewind's opener
// (store/backend) and the LangGraph reader both read it: sqlite:PATH, a
// bare PATH ending in .db or .sqlite, and a SQLite URI, file:PATH (also
// after sqlite:), which means the file PATH as SQLite means it (file:x.db
// is x.db; file:///tmp/x.db is /tmp/x.db; %XX decoded). ok is false for a
// spec that names no SQLite file (memory:, postgres://…, anything else).
//
// rewind opens the file itself, so a spec with SQLite's URI parameters
// (file:x.db?mode=ro, sqlite:?mode=memory, x.db?cache=shared) or
// SQLite's :memory: is refused with an error naming the fix, rather than
// taken as a file of that literal name. A '?' that starts no parameter
// stays part of a plain path's name.
func SQLiteFile(spec string) (path string, ok bool, err error) {
	s := strings.TrimSpace(spec)
	switch {
	case strings.HasPrefix(s, "sqlite:"):
		s = strings.TrimPrefix(s, "sqlite:")
	case strings.HasPrefix(s, "file:"):
	case strings.HasSuffix(s, ".db") || strings.HasSuffix(s, ".sqlite"):
	default:
		return "", false, nil
	}
	if strings.HasPrefix(s, "file:") {
		if path, err = sqliteURI(spec, s); err != nil {
			return "", true, err
		}
		s = path
	} else if name, query, found := strings.Cut(s, "?"); found && sqliteParams(query) != "" {
		return "", true, fmt.Errorf("store %q: rewind opens the file itself and takes no SQLite parameters (%s): %s", spec, sqliteParams(query), fix(name, query))
	}
	switch s {
	case "":
		return "", true, fmt.Errorf("store %q names no file: use sqlite:PATH, e.g. sqlite:./rewind.db", spec)
	case ":memory:":
		return "", true, fmt.Errorf("store %q is SQLite's in-memory database, which no other command could see: use memory: for a store in memory, or name a file, e.g. sqlite:./rewind.db", spec)
	}
	return s, true, nil
}

// sqliteURI reads a SQLite URI (https://sqlite.org/uri.html): file:,
// an authority that is empty or localhost, a path with %XX escapes, and
// parameters (refused).
func sqliteURI(spec, uri string) (string, error) {
	rest := strings.TrimPrefix(uri, "file:")
	rest, _, _ = strings.Cut(rest, "#")
	rest, query, _ := strings.Cut(rest, "?")
	if strings.HasPrefix(rest, "//") {
		host, p, _ := strings.Cut(rest[2:], "/")
		if host != "" && host != "localhost" {
			return "", fmt.Errorf("store %q names a file on host %q: name a local file, e.g. sqlite:./rewind.db", spec, host)
		}
		rest = "/" + p
	}
	path, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("store %q: %w: write a %% in a file URI as %%25, or give the path as sqlite:PATH", spec, err)
	}
	if query != "" {
		params := sqliteParams(query)
		if params == "" {
			params = query
		}
		return "", fmt.Errorf("store %q: rewind opens the file itself and takes no SQLite URI parameters (%s): %s", spec, params, fix(path, query))
	}
	return path, nil
}

// fix says what to give instead of a spec with SQLite parameters.
func fix(path, query string) string {
	if v, err := url.ParseQuery(query); err == nil && v.Get("mode") == "memory" || path == ":memory:" {
		return "use memory: for a store in memory"
	}
	if path == "" {
		return "name the file alone, e.g. sqlite:./rewind.db"
	}
	return fmt.Sprintf("name the file alone, sqlite:%s", path)
}

// sqliteParams lists the SQLite URI parameters (and the driver's) in a
// query, "" when it has none.
func sqliteParams(query string) string {
	v, err := url.ParseQuery(query)
	if err != nil {
		return ""
	}
	known := []string{"vfs", "mode", "cache", "psow", "nolock", "immutable", "modeof",
		"_pragma", "_txlock", "_time_format", "_busy_timeout", "_timeout", "_journal_mode", "_foreign_keys", "_synchronous"}
	var have []string
	for k := range v {
		if slices.Contains(known, strings.ToLower(k)) {
			have = append(have, k)
		}
	}
	slices.Sort(have)
	return strings.Join(have, ", ")
}
