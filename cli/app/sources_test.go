package app

import (
	"path/filepath"
	"strings"
	"testing"

	"rewind/engine/ticket"
)

// Every process that opens one store spec finds the same versions file,
// and a password never reaches its name.
func TestSourcesPathFollowsTheStore(t *testing.T) {
	t.Setenv(EnvSources, "")
	t.Setenv("XDG_STATE_HOME", "/state")
	for spec, want := range map[string]string{
		"sqlite:/data/d.db": "/data/d.db.sources.json",
		"/data/e.sqlite":    "/data/e.sqlite.sources.json",
		"memory:":           "",
	} {
		if got := (Store{Spec: spec}).SourcesPath(); got != want {
			t.Errorf("%s: %q, want %q", spec, got, want)
		}
	}
	a := Store{Spec: "postgres://rewind:s3cret@db.example:5432/tickets?sslmode=disable"}.SourcesPath()
	b := Store{Spec: "postgres://other@db.example:5432/tickets"}.SourcesPath()
	c := Store{Spec: "postgres://rewind@db.example:5432/other"}.SourcesPath()
	if a != b || a == c || filepath.Dir(a) != "/state/rewind/sources" || !strings.Contains(a, "db.example-5432-tickets") || strings.Contains(a, "s3cret") {
		t.Fatalf("postgres files: %q %q %q", a, b, c)
	}
	if _, ok := (Store{Spec: "memory:"}).Sources().(*ticket.MemorySources); !ok {
		t.Fatal("a memory: store's versions are not kept in the process")
	}
	t.Setenv(EnvSources, "/tmp/v.json")
	if got := (Store{Spec: "memory:"}).SourcesPath(); got != "/tmp/v.json" {
		t.Fatalf("$%s ignored: %q", EnvSources, got)
	}
}
