//go:build unix

package sqlite_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"rewind/cli/rewindbin"
	"rewind/store/sqlite"
)

// A process's first write prepares its statements while another process
// recovers the file's WAL after a crash (SQLite's SQLITE_BUSY_RECOVERY: a
// crash drill's resume met it in CI): it waits, as a read does, and does
// not fail at once with "prepare statements: database is locked". The
// other process here (internal/recoveryholder) holds the WAL index's
// locks recovery holds.
func TestFirstWriteWaitsForARecovery(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rewind.db")
	first := open(t, path)
	if err := first.PutCheckpoint(t.Context(), cp(1, 0), nil); err != nil {
		t.Fatal(err)
	}
	s := open(t, path)
	if _, err := s.Get(t.Context(), "t", 1); err != nil {
		t.Fatal(err)
	}
	// The other process: internal/recoveryholder, not raced.
	exe := rewindbin.Tool(t, "rewind/store/sqlite/internal/recoveryholder")
	var holder *exec.Cmd
	sqlite.OnWriteConn(s, func() {
		holder = exec.Command(exe)
		holder.Env = append(os.Environ(), "REWIND_RECOVERY_SHM="+path+"-shm")
		holder.Stderr = os.Stderr
		out, err := holder.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := holder.Start(); err != nil {
			t.Fatal(err)
		}
		var line string
		if _, err := fmt.Fscanln(out, &line); err != nil || line != "held" {
			t.Fatalf("holder said %q, %v", line, err)
		}
	})
	defer func() {
		if holder != nil {
			holder.Wait()
		}
	}()
	if _, err := s.Fence(t.Context(), "t"); err != nil {
		t.Fatalf("a first write while another process recovers the WAL for 300 ms = %v, want it to wait", err)
	}
}
