package cli

import (
	"path/filepath"
	"slices"
	"testing"

	"rewind/cli/app"
)

// `rewind threads` racing `rewind rm`: a thread listed and then deleted
// before its row reads it again (--tokens) drops from the list; the
// command does not fail with `thread "B-18" not found` (it did, when rm
// won the race). Without --tokens the rows are the list as it was read:
// each thread's status came with it.
func TestThreadsLeaveOutAThreadDeletedMeanwhile(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "r.db")
	for _, th := range []string{"A", "B-18"} {
		if code, out, stderr := run(t, "run", "--store", db, "--thread", th, "--input", "Where is SO20260901?"); code != ExitOK {
			t.Fatalf("run %s: %d %s %s", th, code, out, stderr)
		}
	}
	a, err := app.Open(t.Context(), app.Config{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	e := a.Engine
	ts, err := e.Threads(t.Context())
	if err != nil || len(ts) != 2 {
		t.Fatalf("threads: %v %v", ts, err)
	}
	// Another process's rm, between the list and the rows.
	if code, out, stderr := run(t, "rm", "--store", db, "B-18"); code != ExitOK {
		t.Fatalf("rm: %d %s %s", code, out, stderr)
	}
	for _, tokens := range []bool{false, true} {
		rows, err := threadRows(t.Context(), e, ts, tokens)
		if err != nil {
			t.Fatalf("tokens %v: %v", tokens, err)
		}
		want := []string{"A"}
		if !tokens {
			want = append(want, "B-18")
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("tokens %v: rows %q, want %q", tokens, got, want)
		}
	}
}
