package demo_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rewind/demo"
	"rewind/store"
	"rewind/store/sqlite"
)

var rewindBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rewind-demo-test")
	if err != nil {
		panic(err)
	}
	rewindBin = filepath.Join(dir, "rewind")
	// The lessons that kill workers start the real binary.
	if out, err := exec.Command("go", "build", "-o", rewindBin, "..").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func lessonEnv(t *testing.T) demo.Env {
	dir := t.TempDir()
	path := filepath.Join(dir, "lesson.db")
	return demo.Env{
		Spec:    "sqlite:" + path,
		Open:    func(ctx context.Context) (store.Store, error) { return sqlite.Open(ctx, path) },
		Exe:     rewindBin,
		Sources: filepath.Join(dir, "sources.json"),
		Environ: os.Environ(),
	}
}

// Every lesson runs headless on a fresh SQLite store and reaches its
// verdict, with the figures a teacher points at.
func TestEveryLessonReachesItsVerdict(t *testing.T) {
	want := map[string][]string{
		"summary":      {"summary #1–", "PASS: ", "pinned facts kept", "refused before storing"},
		"site-log":     {"14 days, ", "in the facts ledger", "sign-off(s) verbatim"},
		"resume":       {"resume ran the 3 pending subtasks", "there 1 time(s)", "the wrong way has it 2 times"},
		"fork":         {"with @1: 2 branches from @1, the main head keeps 1 request; without an id: 1 branch, the head now holds 2 requests"},
		"migration":    {`read raw: attachment "", status WAITING`, `through the migration: attachment "blob://tickets/2025/att-old.png", status AWAITING_APPROVAL, budget 1`, "schema v99 checkpoint is refused", "upgrade rewind"},
		"bytes":        {"384 KB inline value", "once"},
		"side-effect":  {"no duplicate draft: 1 draft row(s)"},
		"stale-source": {"changed at mid-fanout → re-read", "changed at awaiting-approval → write blocked", "changed at after-side-effect → verification failed"},
		"kill":         {"PASS: 12 kill points", "mid-fanout: pending executor ×3, stored 1, redispatched 2"},
	}
	for _, l := range demo.Lessons() {
		t.Run(l.Name, func(t *testing.T) {
			if testing.Short() && l.Processes {
				t.Skip("kills worker processes")
			}
			v, err := l.Run(context.Background(), lessonEnv(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Log(v.Line)
			if !v.Passed || !strings.HasPrefix(v.Line, "PASS: ") {
				t.Fatalf("verdict: %s", v.Line)
			}
			for _, w := range want[l.Name] {
				if !strings.Contains(v.Line, w) {
					t.Errorf("verdict %q lacks %q", v.Line, w)
				}
			}
			if len(l.Steps) == 0 || l.Thread == "" || l.Proves == "" {
				t.Errorf("lesson %s has no script", l.Name)
			}
		})
	}
	if len(want) != len(demo.Lessons()) {
		t.Errorf("%d lessons, %d checked", len(demo.Lessons()), len(want))
	}
}
