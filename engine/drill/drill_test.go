package drill_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rewind/cli/rewindbin"
	"rewind/engine/drill"
	"rewind/engine/worker"
	"rewind/store"
	"rewind/store/backend"
	"rewind/store/backend/backendtest"
	"rewind/store/postgres/pgtest"
)

func TestMain(m *testing.M) {
	drill.MainIfWorker(buildRounds) // this test binary is the graph drill's worker
	// Drills kill processes, never the machine: a killed process loses
	// nothing without an fsync a commit (backendtest.SyncNormal).
	backendtest.SyncNormal()
	rewindbin.Exit(pgtest.Run(m))
}

// buildRewind is the real binary the workers run, one link for the
// package's tests.
func buildRewind(t *testing.T) string { return rewindbin.Path(t) }

func runMatrix(t *testing.T, spec string) {
	exe := buildRewind(t)
	ctx := context.Background()
	var lines []string
	res, err := drill.Run(ctx, drill.Config{
		Exe: exe, Store: spec, Env: os.Environ(), Sources: filepath.Join(t.TempDir(), "sources.json"),
		Open:    func(ctx context.Context) (store.Store, error) { return backend.Open(ctx, spec) },
		Observe: func(l string) { lines = append(lines, l) },
	})
	if err != nil {
		t.Fatalf("drill: %v\n%s", err, strings.Join(lines, "\n"))
	}
	if len(res.Outcomes) != len(worker.Points)+2+len(drill.SourceVerdicts) {
		t.Fatalf("%d outcomes, want every kill point, the two expired grants and the source drills", len(res.Outcomes))
	}
	allPassed(t, res, lines)
	inOrder(t, res, lines)
	// The kills were real: each drilled point's worker died by SIGKILL.
	for _, o := range res.Outcomes {
		if o.Point == "expired-authorization" {
			continue
		}
		if o.Checks[0].Name != "killed" || !o.Checks[0].OK {
			t.Errorf("%s: first check %+v, want a real kill", o.Point, o.Checks[0])
		}
	}
}

func TestDrillMatrixOnSQLite(t *testing.T) {
	t.Parallel()
	runMatrix(t, "sqlite:"+filepath.Join(t.TempDir(), "drill.db"))
}

// An expired-grant drill whose grant expired before the turn reached the
// gate (or the worker the side effect), as on a busy machine, starts again
// on a longer grant and then passes its checks.
func TestAGrantThatExpiredTooSoonIsTriedAgain(t *testing.T) {
	t.Parallel()
	spec := "sqlite:" + filepath.Join(t.TempDir(), "drill.db")
	p, ok := worker.Lookup(string(worker.BeforeModelCall))
	if !ok {
		t.Fatal("no kill point before-model-call")
	}
	var lines []string
	res, err := drill.RunGrantTTLs(context.Background(), drill.Config{
		Exe: buildRewind(t), Store: spec, Env: os.Environ(), Sources: filepath.Join(t.TempDir(), "sources.json"), Points: []worker.Point{p},
		Open:    func(ctx context.Context) (store.Store, error) { return backend.Open(ctx, spec) },
		Observe: func(l string) { lines = append(lines, l) },
	}, 20*time.Millisecond, 3*time.Second)
	if err != nil {
		t.Fatalf("drill: %v\n%s", err, strings.Join(lines, "\n"))
	}
	allPassed(t, res, lines)
	inOrder(t, res, lines)
	if again := strings.Count(strings.Join(lines, "\n"), "again, with a grant of 3s"); again != 2 {
		t.Errorf("%d expired-grant drills started again on the longer grant, want both:\n%s", again, strings.Join(lines, "\n"))
	}
}

func TestDrillMatrixOnPostgres(t *testing.T) {
	t.Parallel()
	// A database of its own: sources are per store, and other packages'
	// tests write the same records at the same time.
	runMatrix(t, pgtest.Fresh(t, "rewind_drill"))
}

// allPassed fails t for each outcome of res that did not pass (the whole
// outcome as JSON), and then logs the drill's progress lines.
func allPassed(t *testing.T, res drill.Result, lines []string) {
	t.Helper()
	for _, o := range res.Outcomes {
		if !o.Passed {
			b, _ := json.MarshalIndent(o, "", "  ")
			t.Errorf("kill point %s failed:\n%s", o.Point, b)
		}
	}
	if t.Failed() {
		t.Logf("drill log:\n%s", strings.Join(lines, "\n"))
	}
}

// inOrder fails t unless the drill's progress tells its points one after
// another, in the order of its outcomes (the baseline first), each
// heading followed by its own lines: drills run beside the
// others (the expired grants) are told in their place, not interleaved.
func inOrder(t *testing.T, res drill.Result, lines []string) {
	t.Helper()
	want := []string{"baseline:"}
	for _, o := range res.Outcomes {
		switch {
		case o.Point == "expired-authorization":
			want = append(want, "expired authorization:")
		case o.Point == "expired-after-side-effect":
			want = append(want, "expired after the side effect:")
		case strings.HasPrefix(o.Point, "source-changed-at-"):
			want = append(want, o.Point+":")
		default:
			want = append(want, "kill point "+o.Point+":")
		}
	}
	var got []string
	for i, l := range lines {
		if strings.HasPrefix(l, "  ") {
			continue
		}
		if i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "  ") {
			t.Errorf("progress line %d %q is not followed by its own lines", i, l)
		}
		got = append(got, l)
	}
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) || !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("progress headings out of order at %d: want %d headings starting %q, got:\n%s", i, len(want), want, strings.Join(got, "\n"))
		}
	}
}
