package backend

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"rewind/store"
)

// Every store a spec opens has the side-effect table and the drills' hook,
// including the shared memory store behind Opener.
func TestOpenedStoresKeepOptionalInterfaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	open, cleanup := Opener("memory:")
	defer cleanup()
	shared, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sq, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	mem, err := Open(ctx, "memory:")
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]store.Store{"Opener(memory:)": shared, "sqlite": sq, "memory": mem} {
		if _, ok := s.(store.Drafts); !ok {
			t.Errorf("%s: %T does not implement store.Drafts", name, s)
		}
		if _, ok := s.(interface{ SetTxHook(func(string)) }); !ok {
			t.Errorf("%s: %T has no SetTxHook", name, s)
		}
	}
	// Closing a handle of the shared memory store leaves the data.
	if _, _, err := shared.(store.Drafts).CreateDraft(ctx, store.Draft{ThreadID: "t", OperationID: "op", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	shared.Close()
	again, _ := open(ctx)
	if _, err := again.(store.Drafts).Draft(ctx, "t", "op"); err != nil {
		t.Errorf("the shared memory store lost its draft: %v", err)
	}
}

// A spec is printed without its password, also when it does not parse.
func TestDescribeHidesPasswords(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]string{
		"postgres://u:pw@h:5432/db":         "postgres://u:xxxxx@h:5432/db",
		"postgres://u:pw@h:notaport/db":     "postgres://u:xxxxx@h:notaport/db",
		"postgres://u:p@w@[::1/db":          "postgres://u:xxxxx@[::1/db",
		"postgres://u@h/db":                 "postgres://u@h/db",
		"sqlite:/tmp/a:b@c.db":              "sqlite:/tmp/a:b@c.db",
		"memory:":                           "memory:",
		"postgresql://u:pw@h:5432/db?x=%zz": "postgresql://u:xxxxx@h:5432/db?x=%zz",
	} {
		if got := Describe(spec); got != want {
			t.Errorf("Describe(%q) = %q, want %q", spec, got, want)
		}
	}
}

// A SQLite spec means what SQLite means: file: URIs name their file, and
// SQLite's parameters and :memory: are refused with the fix, leaving no
// file behind (they made files named "file:x.db" and "?mode=memory").
// Not parallel: t.Chdir moves the process's working directory.
func TestSQLiteSpecs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Chdir(dir)
	for spec, file := range map[string]string{
		"file:x.db":                              "x.db",
		"sqlite:file:y.db":                       "y.db",
		"file:" + filepath.Join(dir, "a%20b.db"): "a b.db",
		"file://" + filepath.Join(dir, "abs.db"): "abs.db",
		"sqlite:q?b.db":                          "q?b.db", // a '?' that starts no parameter is the name's
		"plain.sqlite":                           "plain.sqlite",
	} {
		s, err := Open(ctx, spec)
		if err != nil {
			t.Errorf("%s: %v", spec, err)
			continue
		}
		s.Close()
		if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
			t.Errorf("%s made no %s: %v", spec, file, err)
		}
	}
	for spec, fix := range map[string]string{
		"sqlite:?mode=memory":      "use memory:",
		"file::memory:":            "use memory:",
		"sqlite::memory:":          "use memory:",
		"file:z.db?mode=ro":        "name the file alone, sqlite:z.db",
		"sqlite:w.db?cache=shared": "name the file alone, sqlite:w.db",
		"file://elsewhere/v.db":    "name a local file",
	} {
		_, err := Open(ctx, spec)
		if err == nil || !strings.Contains(err.Error(), fix) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line saying %q", spec, err, fix)
		}
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	want := []string{"a b.db", "abs.db", "plain.sqlite", "q?b.db", "x.db", "y.db"}
	if !slices.Equal(names, want) {
		t.Errorf("files %q, want %q", names, want)
	}
}
