package cli_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
)

// BenchmarkNewProcess is what a one-shot command costs in a new process
// of the built binary, on a 120-turn SQLite thread (`rewind bench`):
// cpu-ms/op is the process's user+sys CPU (getrusage), the figure that
// stays put on a shared machine. threads is the bare start (open the
// store, read one listing a thread); show and log -n 20 should cost
// within a few ms of it, and show of a middle checkpoint too.
//
//	go test ./cli -run x -bench NewProcess -count 5
func BenchmarkNewProcess(b *testing.B) {
	bin := binary // binary_test.go's TestMain built it
	spec := "sqlite:" + filepath.Join(b.TempDir(), "start.db")
	out, err := exec.Command(bin, "bench", "--turns", "120", "--processes", "0", "--sqlite-sync", "normal", "--store", spec).CombinedOutput()
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
		{"threads", []string{"threads"}},
		{"show", []string{"show", thread}},
		{"show-middle", []string{"show", thread, "@480"}},
		{"log-n20", []string{"log", thread, "-n", "20"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var cpu int64
			for b.Loop() {
				cmd := exec.Command(bin, append(c.args, "--store", spec)...)
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
