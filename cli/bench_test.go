package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"rewind/store/backend"
)

// bench's last lines are what a reader compares: a short run is summed up
// whole (never "0.00 ms, 0.0 KB" for turns it did not run), and the cached
// load is named next to the load it repeats.
func TestBenchSummaryLines(t *testing.T) {
	t.Parallel()
	code, out, stderr := run(t, "bench", "--store", "memory:", "--turns", "3")
	if code != ExitOK {
		t.Fatalf("bench --turns 3: %d %s %s", code, out, stderr)
	}
	short := regexp.MustCompile(`(?m)^turns 1-3: median [0-9.]+ ms, ([0-9.]+) KB a turn \(run 20 or more`)
	m := short.FindStringSubmatch(out)
	if m == nil || m[1] == "0.0" {
		t.Fatalf("a 3-turn bench's summary:\n%s", out)
	}
	// 20 turns in the built binary, without the race detector's cost in this
	// test binary: the same command and output (the store is in the
	// process either way).
	code, out, stderr = runBuilt(t, "bench", "--store", "memory:", "--turns", "20")
	if code != ExitOK {
		t.Fatalf("bench --turns 20: %d %s %s", code, out, stderr)
	}
	for _, want := range []string{
		`(?m)^turns 11-20: median [0-9.]+ ms, [1-9][0-9.]* KB a turn; last 10: median [0-9.]+ ms, [1-9][0-9.]* KB a turn$`,
		`load latest [0-9.]+ ms \([0-9.]+ ms cached\), middle [0-9.]+ ms \(a new engine of this process\);`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Fatalf("a 20-turn bench's output lacks %s:\n%s", want, out)
		}
	}
	// The slope: a turn's CPU early and late, where CPU time is read.
	slope := regexp.MustCompile(`(?m)^slope \(medians a turn\): turns 11-20 ([0-9.]+) ms CPU \([0-9.]+ ms\), [0-9]+ KB written; turns 11-20 [0-9.]+ ms CPU \([0-9.]+ ms\), [0-9]+ KB written: [0-9.]+x the CPU$`)
	if m := slope.FindStringSubmatch(out); runtime.GOOS == "linux" && (m == nil || m[1] == "0.00") {
		t.Fatalf("a 20-turn bench's output lacks the slope %s:\n%s", slope, out)
	}
}

// bench names how the store commits, and --sqlite-sync chooses it; a
// mode it does not know is input given wrong. Through the built binary,
// each with its own environment, so that the test runs in parallel (it
// waits on fsyncs and bench's processes).
func TestBenchNamesTheSQLiteSync(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "b.db")
	unset := backend.SyncEnv + "="
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "durability: --sqlite-sync full, commits fsynced (a run's together, when it releases the thread)"},
		{[]string{"--sqlite-sync", "normal"}, "durability: --sqlite-sync normal, commits not fsynced"},
		{[]string{"--sqlite-sync", "FULL"}, "durability: --sqlite-sync full"},
	} {
		code, out, stderr := runBuiltEnv(t, []string{unset}, append([]string{"bench", "--store", db, "--turns", "1"}, c.args...)...)
		if code != ExitOK || !strings.Contains(out, c.want) {
			t.Fatalf("bench %v: exit %d, want %q in:\n%s%s", c.args, code, c.want, out, stderr)
		}
	}
	code, _, stderr := runBuiltEnv(t, []string{unset}, "bench", "--store", db, "--turns", "1", "--sqlite-sync", "off")
	if code != ExitUsage || !strings.Contains(stderr, "give full") {
		t.Fatalf("--sqlite-sync off: exit %d, %s", code, stderr)
	}
	code, _, stderr = runBuiltEnv(t, []string{backend.SyncEnv + "=fast"}, "bench", "--store", db, "--turns", "1")
	if code == ExitOK || !strings.Contains(stderr, "REWIND_SQLITE_SYNC") {
		t.Fatalf("$REWIND_SQLITE_SYNC=fast: exit %d, %s", code, stderr)
	}
}

// On SQLite, bench compares each turn with the floor (the same rows in a
// bare file beside the store, removed after); --floor=false and other
// stores print no floor.
func TestBenchComparesWithTheFloor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "b.db")
	line := regexp.MustCompile(`(?m)^the floor \(the same rows and commits in bare tables, as durable; medians a turn\): turns 11-20 [0-9.]+ ms against ([0-9.]+) \([0-9.]+x\), CPU [0-9.]+ ms against [0-9.]+ \([0-9.]+x\); turns 16-25 `)
	code, out, stderr := runBuilt(t, "bench", "--store", db, "--turns", "25", "--processes", "0")
	if m := line.FindStringSubmatch(out); code != ExitOK || m == nil || m[1] == "0.00" {
		t.Fatalf("bench on SQLite: exit %d, no floor line %s in:\n%s%s", code, line, out, stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".rewind-floor-*")); len(left) > 0 {
		t.Fatalf("bench left its floor files behind: %v", left)
	}
	for _, args := range [][]string{{"--store", db, "--floor=false"}, {"--store", "memory:"}} {
		code, out, stderr := runBuilt(t, append([]string{"bench", "--turns", "2", "--processes", "0"}, args...)...)
		if code != ExitOK || strings.Contains(out, "the floor") {
			t.Fatalf("bench %v: exit %d, want no floor line:\n%s%s", args, code, out, stderr)
		}
	}
}

// --sqlite-sync reaches the processes bench starts, through
// $REWIND_SQLITE_SYNC in its own environment: in this process (t.Setenv,
// so not parallel; one bench run).
func TestBenchSQLiteSyncReachesItsProcesses(t *testing.T) {
	t.Setenv(backend.SyncEnv, "")
	db := "sqlite:" + filepath.Join(t.TempDir(), "b.db")
	code, out, stderr := run(t, "bench", "--store", db, "--turns", "1", "--sqlite-sync", "FULL")
	if code != ExitOK || !strings.Contains(out, "durability: --sqlite-sync full") {
		t.Fatalf("bench --sqlite-sync FULL: exit %d:\n%s%s", code, out, stderr)
	}
	if got := os.Getenv(backend.SyncEnv); got != "full" {
		t.Errorf("$%s = %q after --sqlite-sync FULL: the processes it starts would not open the store the same way", backend.SyncEnv, got)
	}
}

// bench times loads in new processes of their own, and says which
// figures come from where.
func TestBenchLoadsInNewProcesses(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "b.db")
	code, out, stderr := run(t, "bench", "--store", db, "--turns", "3", "--processes", "2", "--sqlite-sync", "normal")
	if code != ExitOK {
		t.Fatalf("bench: %d %s%s", code, out, stderr)
	}
	for _, want := range []string{
		`middle [0-9.]+ ms \(a new engine of this process\)`,
		`(?m)^in a new process each \(4, medians\): open [0-9.]+ ms, then load latest [0-9.]+ ms \([0-9.]+ ms CPU\), middle [0-9.]+ ms \([0-9.]+ ms CPU\); the same process's next load [0-9.]+ ms \([0-9.]+ ms CPU\)$`,
		`(?m)^commands, a new process each from start to exit \(medians\): a bare start [0-9]+ ms \([0-9]+ ms CPU, [1-9][0-9]* MB\); show @24 [0-9]+ ms \([0-9]+ ms CPU, [1-9][0-9]* MB\); show @12 [0-9]+ ms \([0-9]+ ms CPU, [1-9][0-9]* MB\); log \(all 24, piped\) [0-9]+ ms \([0-9]+ ms CPU, [1-9][0-9]* MB\); log --values \(all 24\) [0-9]+ ms \([0-9]+ ms CPU, [1-9][0-9]* MB\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Fatalf("bench's output lacks %s:\n%s", want, out)
		}
	}
	// Each load's CPU time is read in its process (not on the clock).
	if runtime.GOOS == "linux" {
		loads := regexp.MustCompile(`(?m)^in a new process each.*$`).FindString(out)
		m := regexp.MustCompile(`\(([0-9.]+) ms CPU\)`).FindAllStringSubmatch(loads, -1)
		for _, c := range m {
			if v, _ := strconv.ParseFloat(c[1], 64); v <= 0 {
				t.Fatalf("a load took no CPU time (%s):\n%s", c[0], out)
			}
		}
		if len(m) != 3 {
			t.Fatalf("want the CPU time of 3 loads:\n%s", out)
		}
	}
	code, out, _ = run(t, "bench", "--store", "memory:", "--turns", "2")
	if code != ExitOK || strings.Contains(out, "new process") {
		t.Fatalf("bench on memory: (no other process sees it): %d\n%s", code, out)
	}
}

// A command asked by bench (REWIND_BENCH_PEAK_RSS) writes its own peak
// memory as it ends, whatever its outcome: a child's rusage would say
// its parent's, which bench's is.
func TestCommandsWriteTheirPeakMemory(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--version"}, {"show", "nope", "--store", "memory:"}} {
		f := filepath.Join(t.TempDir(), "peak")
		runBuiltEnv(t, []string{peakRSSEnv + "=" + f}, args...)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("rewind %q wrote no peak memory: %v", args, err)
		}
		if n, err := strconv.ParseInt(string(b), 10, 64); err != nil || n < 1<<20 || n > 1<<30 {
			t.Fatalf("rewind %q wrote a peak memory of %q bytes: not a process's", args, b)
		}
	}
}
