package engine_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/sqlite"
)

// fullDiskDir names, in the child, the folder the test mounts a small
// tmpfs on.
const fullDiskDir = "REWIND_TEST_FULL_DISK"

// Issue 38: a completely full disk said `disk I/O error (4874)` and
// nothing else. On a real full disk (a 1 MB tmpfs, mounted in a user and
// mount namespace of its own: the test binary again, as a child), a run
// whose commit finds no space names the disk and the fix, a resume from
// what it stored; opening the store while the disk is full says so too;
// and once there is space the resume finishes the turn.
func TestAFullDiskIsNamed(t *testing.T) {
	t.Parallel()
	dir := os.Getenv(fullDiskDir)
	if dir == "" {
		dir = t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestAFullDiskIsNamed$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), fullDiskDir+"="+dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		}
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Skipf("SKIPPED LOUDLY: no user and mount namespaces here to mount a small disk in: %v", err)
		}
		if err != nil || !strings.Contains(string(out), "--- PASS: TestAFullDiskIsNamed") {
			t.Fatalf("the child: %v\n%s", err, out)
		}
		t.Logf("the child:\n%s", out)
		return
	}
	// In the child: a private mount of a 1 MB tmpfs, seen by this process
	// alone.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		t.Fatalf("make the mounts private: %v", err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount a 1 MB tmpfs on %s: %v", dir, err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	ctx := context.Background()
	path := filepath.Join(dir, "s.db")
	filler := filepath.Join(dir, "filler")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := ticket.NewEngine(st, ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	filled := false
	_, err = e.Run(ctx, "t", ticket.Input("Where is my parcel SO20260901?"), engine.RunConfig{Hook: func(p engine.HookPoint, info engine.HookInfo) {
		if p == engine.HookAfterCommit && !filled {
			filled = true
			fill(t, filler)
		}
	}})
	switch {
	case err == nil:
		t.Fatal("the run finished on a full disk")
	case !errors.Is(err, store.ErrDiskFull):
		t.Fatalf("the run's error does not say the disk is full: %v", err)
	case !strings.Contains(err.Error(), "the disk holding "+dir+" is full"),
		!strings.Contains(err.Error(), "free space on it, then a resume carries on from checkpoint"), !fixedBy(err, engine.FixResume, "t"),
		strings.Contains(err.Error(), "\n"):
		t.Fatalf("the run's error names neither the disk nor the fix in one line: %v", err)
	}
	t.Logf("the run: %v", err)
	st.Close()
	// Space again: the resume finishes the turn.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if st, err = sqlite.Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	if e, err = ticket.NewEngine(st, ticket.NewMock()); err != nil {
		t.Fatal(err)
	}
	res, err := e.Resume(ctx, "t", engine.RunConfig{})
	if err != nil {
		t.Fatalf("resume once there is space: %v", err)
	}
	if res.Status != engine.RunDone {
		t.Fatalf("the resumed turn ended %s, want done", res.Status)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// A store closed cleanly (no WAL left), then the disk fills: even
	// opening it needs space for the WAL's index, and SQLite says only
	// "disk I/O error (4874)" (SQLITE_IOERR_SHMSIZE).
	fill(t, filler)
	if again, err := sqlite.Open(ctx, path); err == nil {
		again.Close()
		t.Fatal("the store opened on a full disk")
	} else if !errors.Is(err, store.ErrDiskFull) || !strings.Contains(err.Error(), "the disk holding "+dir+" is full") {
		t.Fatalf("open on a full disk: %v", err)
	} else {
		t.Logf("open: %v", err)
	}
}

// fill writes path until the disk holding it is full.
func fill(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("fill the disk: %v", err)
			}
			return
		}
	}
}
