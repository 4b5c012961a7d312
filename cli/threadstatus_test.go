package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Issue 33, item 4: a run whose process was killed cannot record its own
// death, and its newest checkpoint still says running. `rewind threads`
// says running while the process holds the thread, and stopped once it
// is killed (text and --json), decided from the lock and the listing.
func TestThreadsSaysAKilledRunStopped(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	cmd := exec.Command(binary, "run", "--thread", "t", "--input", "Where is my parcel for order SO20260901?", "--mock-latency", "1h")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	status := func() (string, string) {
		r := rewind(t, env, "threads", "--json")
		if r.code != 0 {
			t.Fatalf("threads: %d %s", r.code, r.stderr)
		}
		var rows []struct{ ID, Status, Reason string }
		if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
			t.Fatalf("threads --json: %v: %s", err, r.stdout)
		}
		if len(rows) != 1 {
			return "", ""
		}
		return rows[0].Status, rows[0].Reason
	}
	// The run is under way once its input is stored; it waits in the
	// planner's call for an hour.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if st, _ := status(); st == "running" {
			break
		} else if st != "" {
			t.Fatalf("while the run holds the thread: %s, want running", st)
		}
		if time.Now().After(deadline) {
			t.Fatal("the run never stored its input")
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed = true
	if st, reason := status(); st != "stopped" || !strings.Contains(reason, "resume") {
		t.Fatalf("after the kill: %s (%q), want stopped, resumable", st, reason)
	}
	r := rewind(t, env, "threads")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.code != 0 || len(lines) != 2 || !strings.Contains(lines[1], " stopped ") {
		t.Fatalf("threads: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
