package drill_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"rewind/store/postgres/pgtest"
	"strings"
	"sync"
	"testing"

	"rewind/engine/drill"
	"rewind/engine/worker"
	"rewind/store"
	"rewind/store/backend"
)

// built is the real binary the workers run, one link for the package's
// tests (TestMain removes it).
var built struct {
	once     sync.Once
	dir, exe string
	err      error
}

func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

func buildRewind(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "rewind-drill-test"); built.err != nil {
			return
		}
		built.exe = filepath.Join(built.dir, "rewind")
		if out, err := exec.Command("go", "build", "-o", built.exe, "rewind").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("build rewind: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.exe
}

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
	for _, o := range res.Outcomes {
		if !o.Passed {
			b, _ := json.MarshalIndent(o, "", "  ")
			t.Errorf("kill point %s failed:\n%s", o.Point, b)
		}
	}
	if t.Failed() {
		t.Logf("drill log:\n%s", strings.Join(lines, "\n"))
	}
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
	runMatrix(t, "sqlite:"+filepath.Join(t.TempDir(), "drill.db"))
}

func TestDrillMatrixOnPostgres(t *testing.T) {
	// A database of its own: sources are per store, and other packages'
	// tests write the same records at the same time.
	runMatrix(t, pgtest.Fresh(t, "rewind_drill"))
}
