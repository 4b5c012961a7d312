package cli_test

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
)

// BenchmarkNewProcess is what a one-shot command costs in a new process
// of the built binary, on a 120-turn SQLite thread (`rewind bench`):
// cpu-ms/op is the process's user+sys CPU (getrusage), the figure that
// stays put on a shared machine (not the child's max RSS: Linux counts
// in it the test process it was forked from, 40 MB and more).
// version is the bare start (the process alone, as issue 31 measures it);
// threads opens the store and reads one listing a thread;
// show and log -n 20 should cost within a few ms of it, and show of a
// middle checkpoint too; log is the whole chain, piped, a page of
// listings at a time. $REWIND_BENCH_TURNS sets the thread's turns (5,000
// takes minutes to write, at --sqlite-sync normal).
//
//	go test ./cli -run x -bench NewProcess -count 5
//	REWIND_BENCH_TURNS=5000 go test ./cli -run x -bench NewProcess -benchtime 7x
func BenchmarkNewProcess(b *testing.B) {
	bin := binary // binary_test.go's TestMain built it
	turns := cmp.Or(os.Getenv("REWIND_BENCH_TURNS"), "120")
	spec := "sqlite:" + filepath.Join(b.TempDir(), "start.db")
	out, err := exec.Command(bin, "bench", "--turns", turns, "--processes", "0", "--sqlite-sync", "normal", "--store", spec).CombinedOutput()
	if err != nil {
		b.Fatalf("rewind bench: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`thread (bench-[0-9a-f]+): (\d+) checkpoints`).FindSubmatch(out)
	if m == nil {
		b.Fatalf("rewind bench named no thread:\n%s", out)
	}
	thread := string(m[1])
	for _, c := range []struct {
		name string
		args []string
	}{
		{"version", []string{"--version"}},
		{"threads", []string{"threads"}},
		{"show", []string{"show", thread}},
		{"show-middle", []string{"show", thread, "@480"}},
		{"log-n20", []string{"log", thread, "-n", "20"}},
		{"log", []string{"log", thread}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var cpu int64
			for b.Loop() {
				args := c.args
				if c.name != "version" {
					args = append(args, "--store", spec)
				}
				cmd := exec.Command(bin, args...)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("rewind %v: %v\n%s", c.args, err, out)
				}
				ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				cpu += ru.Utime.Nano() + ru.Stime.Nano()
			}
			b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}
