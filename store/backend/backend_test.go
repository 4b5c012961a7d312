package backend

import (
	"context"
	"path/filepath"
	"testing"

	"rewind/store"
)

// Every store a spec opens has the side-effect table and the drills' hook,
// including the shared memory store behind Opener.
func TestOpenedStoresKeepOptionalInterfaces(t *testing.T) {
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
