package sqlite_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"rewind/cli/rewindbin"
	"rewind/store/sqlite"
)

// contentionCommands is how many commands each of the two processes runs
// (REWIND_CONTENTION_COMMANDS sets it: 1,000 each ran clean too): few
// enough for CI (150 took 44 s on this shared machine when the processes
// were raced copies of the test binary, 8 s without); the old store failed
// them all the same, behind holdFor.
var contentionCommands = 100

// holdFor is how long one command of process b holds the file's write
// lock, as a long delete, a prune or a process the scheduler stopped
// would: past the 5 s busy_timeout that was all a write used to wait.
const holdFor = 6 * time.Second

// Two processes hammer one file as two shells running rewind in a loop
// would: each command opens the store, fences a thread, writes a turn's
// checkpoints and task writes, reads it back, sometimes deletes one, and
// closes; one of b's holds the write lock for holdFor. None fails:
// contention is waited out, never reported. Before, the open of each
// command took the write lock (its migration's transaction) and a write
// waited 5 s at most: a's commands failed with SQLITE_BUSY ("database is
// locked") behind b's long one.
func TestContentionIsAbsorbed(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("two processes hammering one file: not in -short")
	}
	if n, err := strconv.Atoi(os.Getenv("REWIND_CONTENTION_COMMANDS")); err == nil {
		contentionCommands = n
	}
	path := filepath.Join(t.TempDir(), "rewind.db")
	s := open(t, path)
	if err := s.PutCheckpoint(t.Context(), cp(1, 0), nil); err != nil { // the file exists, migrated
		t.Fatal(err)
	}
	// The two processes are rewind's code built as rewind is (without
	// -race): raced copies of this binary were 15 of its 17 s of CPU.
	exe := rewindbin.Tool(t, "rewind/store/sqlite/internal/contender")
	type result struct {
		name     string
		failures []string
		ran      int
		err      error
	}
	done := make(chan result)
	for _, name := range []string{"a", "b"} {
		go func() {
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), "REWIND_CONTENTION_HELPER="+name, "REWIND_CONTENTION_DB="+path,
				"REWIND_CONTENTION_COMMANDS="+strconv.Itoa(contentionCommands), "REWIND_CONTENTION_HOLD="+holdFor.String())
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				done <- result{name: name, err: err}
				return
			}
			if err := cmd.Start(); err != nil {
				done <- result{name: name, err: err}
				return
			}
			r := result{name: name}
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, "fail "):
					r.failures = append(r.failures, line)
				case strings.HasPrefix(line, "ran "):
					r.ran, _ = strconv.Atoi(strings.TrimPrefix(line, "ran "))
				}
			}
			r.err = cmd.Wait()
			done <- r
		}()
	}
	for range 2 {
		r := <-done
		if r.err != nil {
			t.Errorf("process %s: %v", r.name, r.err)
		}
		if r.ran != contentionCommands {
			t.Errorf("process %s ran %d commands, want %d", r.name, r.ran, contentionCommands)
		}
		if len(r.failures) > 0 {
			t.Errorf("process %s: %d of %d commands failed, first: %s", r.name, len(r.failures), r.ran, r.failures[0])
		}
	}
}

// Opening a store of this schema writes nothing, so it does not wait for
// another process's write: each command's open used to take the write
// lock for its migration's transaction.
func TestOpenWaitsForNoWriter(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rewind.db")
	s := open(t, path)
	if err := s.PutCheckpoint(t.Context(), cp(1, 0), nil); err != nil {
		t.Fatal(err)
	}
	release := holdWrite(t, s)
	defer release()
	// Not a timed assertion: the deadline only ends an open that waits.
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second) // an open that waits for the writer waits past it
	defer cancel()
	o, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open while another holds the write lock: %v, want it open without a write", err)
	}
	if _, err := o.Latest(ctx, "t"); err != nil {
		t.Errorf("read: %v", err)
	}
	if err := o.Close(); err != nil {
		t.Error(err)
	}
}
