package rewindbin

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// While one test binary builds, another's lock waits (here: a try
// fails), and the build's end lets the next in.
func TestBuildsTakeTurns(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	unlock, err := lockBuild()
	if err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "rewind-build-*.lock"))
	if len(matches) != 1 {
		t.Fatalf("lock files in the temporary folder: %q, want one", matches)
	}
	other, err := os.Open(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("a second build's lock while the first builds: %v, want it to wait (EWOULDBLOCK)", err)
	}
	unlock()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("a second build's lock after the first: %v, want it taken", err)
	}
}
