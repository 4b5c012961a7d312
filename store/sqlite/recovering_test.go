//go:build unix

package sqlite_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"rewind/store/sqlite"
)

// A process's first write prepares its statements while another process
// recovers the file's WAL after a crash (SQLite's SQLITE_BUSY_RECOVERY: a
// crash drill's resume met it in CI): it waits, as a read does, and does
// not fail at once with "prepare statements: database is locked". The
// other process here holds the WAL index's locks recovery holds.
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
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var holder *exec.Cmd
	sqlite.OnWriteConn(s, func() {
		holder = exec.Command(exe, "-test.run=^TestRecoveryHolder$")
		holder.Env = append(os.Environ(), "REWIND_RECOVERY_SHM="+path+"-shm", "GORACE=atexit_sleep_ms=0")
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

// TestRecoveryHolder is TestFirstWriteWaitsForARecovery's other process:
// it does what SQLite's WAL recovery does to the -shm file, for 300 ms:
// takes every lock byte (120 to 127) and leaves the index header's two
// copies differing, as a recovery rewriting it would. A reader then gets
// SQLITE_BUSY_RECOVERY; once the locks go, the next reader recovers.
func TestRecoveryHolder(t *testing.T) {
	shm := os.Getenv("REWIND_RECOVERY_SHM")
	if shm == "" {
		t.Skip("the other process of TestFirstWriteWaitsForARecovery")
	}
	f, err := os.OpenFile(shm, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 120, Len: 8}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		t.Fatal(err)
	}
	change := make([]byte, 4) // the first copy's iChange
	if _, err := f.ReadAt(change, 8); err != nil {
		t.Fatal(err)
	}
	change[0]++
	if _, err := f.WriteAt(change, 8); err != nil {
		t.Fatal(err)
	}
	fmt.Println("held")
	time.Sleep(300 * time.Millisecond)
}
