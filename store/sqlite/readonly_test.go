package sqlite_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"rewind/cli/rewindbin"
)

// Issue 11's eighth case: a user who may read a store but not write it
// opened it, SQLite left a -shm and -wal of that user's beside it, and the
// owner could not write the store any more ("attempt to write a readonly
// database"). These tests run the store in processes of their own: as two
// other users when the test runs as root (root may write anything, so it
// would never see the problem), and as this user otherwise, with the
// file's mode taking the other user's place.

// users are the owner of the store and a user who may only read it; -1
// is this process's own user.
type users struct{ owner, other int }

func roUsers(t *testing.T) users {
	if os.Geteuid() == 0 {
		return users{owner: 40001, other: 40002}
	}
	t.Log("not root: the owner and the reader are both this user, the file's mode stands in for the other user")
	return users{owner: -1, other: -1}
}

// roDir is a directory every user may write (as a shared directory is),
// with a copy of the helper (internal/rohelper, not raced) that every
// user may run: the build cache it comes from is this user's alone.
func roDir(t *testing.T) (dir, exe string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "rewind-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(rewindbin.Tool(t, "rewind/store/sqlite/internal/rohelper"))
	if err != nil {
		t.Fatal(err)
	}
	exe = filepath.Join(dir, "rohelper")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, exe
}

// as starts the helper as uid (-1: this user).
func as(t *testing.T, uid int, exe, mode, db, thread string, env ...string) (*exec.Cmd, *bufio.Scanner, io.WriteCloser) {
	t.Helper()
	// A process forked elsewhere in this binary while roDir wrote the
	// helper holds it open for writing until it execs: the helper's exec
	// fails with "text file busy" for that moment (seen once in a run).
	for try := 0; ; try++ {
		cmd, out, in, err := startAs(uid, exe, mode, db, thread, env...)
		if errors.Is(err, syscall.ETXTBSY) && try < 50 {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
		return cmd, bufio.NewScanner(out), in
	}
}

func startAs(uid int, exe, mode, db, thread string, env ...string) (*exec.Cmd, io.ReadCloser, io.WriteCloser, error) {
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), append(env, "REWIND_RO_HELPER="+mode, "REWIND_RO_DB="+db, "REWIND_RO_THREAD="+thread, "HOME=/")...)
	cmd.Dir = filepath.Dir(db)
	if uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		in.Close()
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, out, in, nil
}

// run runs the helper as uid to its end and returns what it said.
func run(t *testing.T, uid int, exe, mode, db, thread string, env ...string) string {
	t.Helper()
	cmd, out, in := as(t, uid, exe, mode, db, thread, env...)
	in.Close()
	var lines []string
	for out.Scan() {
		lines = append(lines, out.Text())
	}
	cmd.Wait()
	return strings.Join(lines, "\n")
}

// files lists the directory's entries other than the helper, with
// their owners.
func files(t *testing.T, dir string) map[string]int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range entries {
		if e.Name() == "rohelper" {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = int(fi.Sys().(*syscall.Stat_t).Uid)
	}
	return out
}

func TestReadOnlyOpenLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	u := roUsers(t)
	dir, exe := roDir(t)
	db := filepath.Join(dir, "r.db")
	if got := run(t, u.owner, exe, "put", db, "t"); got != "ok" {
		t.Fatalf("the owner's first put: %s", got)
	}
	before := files(t, dir)
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}

	// The reader reads; writes and locks are refused, saying why and what
	// to do; nothing new is left in the directory.
	if got := run(t, u.other, exe, "read", db, ""); got != "threads t" {
		t.Errorf("the reader's read = %q, want the thread", got)
	}
	for _, mode := range []string{"put", "lock"} {
		got := run(t, u.other, exe, mode, db, "x")
		if !strings.HasPrefix(got, "error ") || !strings.Contains(got, "open read-only: run rewind as its owner, or make the file writable") {
			t.Errorf("the reader's %s = %q, want a refusal naming the fix", mode, got)
		}
	}
	if after := files(t, dir); !mapsEqual(after, before) {
		t.Errorf("opening the store read-only left %v; before it there was %v", after, before)
	}

	// Writable again: the owner writes as before.
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run(t, u.owner, exe, "put", db, "after"); got != "ok" {
		t.Fatalf("the owner's put once the file is writable again = %q", got)
	}
	if got := run(t, u.owner, exe, "read", db, ""); got != "threads after,t" {
		t.Errorf("the owner's read = %q", got)
	}
}

// While the owner has the store open (its -wal and -shm are there), a
// reader opens it read-only through them: it sees the owner's newest
// commits, still in the WAL, and leaves nothing of its own.
func TestReadOnlyOpenBesideALiveWriter(t *testing.T) {
	t.Parallel()
	u := roUsers(t)
	if u.owner == u.other {
		t.Skip("needs two users: run as root")
	}
	dir, exe := roDir(t)
	db := filepath.Join(dir, "r.db")
	if got := run(t, u.owner, exe, "put", db, "t"); got != "ok" {
		t.Fatalf("the owner's first put: %s", got)
	}
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, in := as(t, u.owner, exe, "hold", db, "live")
	if !out.Scan() || out.Text() != "ok" {
		t.Fatalf("the owner's put: %q", out.Text())
	}
	held := files(t, dir)
	if _, ok := held["r.db-shm"]; !ok {
		t.Fatalf("the owner's open store has no -shm: %v", held)
	}
	if got := run(t, u.other, exe, "read", db, ""); got != "threads live,t" {
		t.Errorf("the reader's read beside the live owner = %q, want both threads", got)
	}
	if after := files(t, dir); !mapsEqual(after, held) {
		t.Errorf("the reader left %v; before it there was %v", after, held)
	}
	in.Close() // the owner closes the store
	if !out.Scan() {
		// It printed nothing more; its exit is enough.
	}
	if got := run(t, u.other, exe, "read", db, ""); got != "threads live,t" {
		t.Errorf("the reader's read after the owner left = %q, want both threads", got)
	}
	if got := run(t, u.owner, exe, "put", db, "after"); got != "ok" {
		t.Errorf("the owner's put after the reader = %q", got)
	}
}

// The owner's last process died with commits still in the WAL. A reader
// who cannot read the WAL is refused, with the fix, rather than shown a
// store without them; one who can reads through it. Neither leaves files.
// (As one user, the reader can always read the WAL.)
func TestReadOnlyOpenAfterTheOwnerCrashed(t *testing.T) {
	t.Parallel()
	u := roUsers(t)
	for _, mode := range []os.FileMode{0o600, 0o644} {
		t.Run(fmt.Sprintf("mode %04o", mode), func(t *testing.T) {
			if u.owner == u.other && mode == 0o644 {
				t.Skip("needs two users: run as root")
			}
			dir, exe := roDir(t)
			db := filepath.Join(dir, "r.db")
			if err := os.WriteFile(db, nil, mode); err != nil {
				t.Fatal(err)
			}
			if u.owner >= 0 {
				if err := os.Chown(db, u.owner, u.owner); err != nil {
					t.Fatal(err)
				}
			}
			if got := run(t, u.owner, exe, "put", db, "t", "REWIND_RO_CRASH=1"); got != "ok" {
				t.Fatalf("the owner's put: %s", got)
			}
			if size := fileSize(t, db+"-wal"); size <= 0 {
				t.Fatalf("the crashed owner left a WAL of %d bytes, want its commits there", size)
			}
			if err := os.Chmod(db, 0o444); err != nil {
				t.Fatal(err)
			}
			before := files(t, dir)
			got := run(t, u.other, exe, "read", db, "")
			if mode == 0o600 && u.owner != u.other { // one user can read its own WAL
				if !strings.Contains(got, "cannot read the commits not yet folded into it") || !strings.Contains(got, "run rewind as its owner") {
					t.Errorf("the reader's read = %q, want a refusal naming the fix", got)
				}
			} else if got != "threads t" {
				t.Errorf("the reader's read = %q, want the thread from the WAL", got)
			}
			if after := files(t, dir); !mapsEqual(after, before) {
				t.Errorf("the reader left %v; before it there was %v", after, before)
			}
			if err := os.Chmod(db, 0o644); err != nil {
				t.Fatal(err)
			}
			if got := run(t, u.owner, exe, "read", db, ""); got != "threads t" {
				t.Errorf("the owner's read after its crash = %q", got)
			}
		})
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// A store another user already spoiled (an older rewind, or sqlite3 run
// by hand) is refused with the file to blame and the fix, not with
// "attempt to write a readonly database".
func TestForeignFilesBesideTheStoreAreNamed(t *testing.T) {
	t.Parallel()
	u := roUsers(t)
	for _, tc := range []struct {
		file, content, fix string
		mode               string // what fails: the put, or only a lock
	}{
		{"r.db-shm", "", "rm ", "put"},
		{"r.db-wal", "", "rm ", "put"},
		{"r.db-wal", "not empty", "do not delete it", "put"},
		{"r.db.locks", "", "rm -r ", "lock"},
	} {
		t.Run(fmt.Sprintf("%s %q", tc.file, tc.content), func(t *testing.T) {
			dir, exe := roDir(t)
			db := filepath.Join(dir, "r.db")
			if got := run(t, u.owner, exe, "put", db, "t"); got != "ok" {
				t.Fatalf("the owner's first put: %s", got)
			}
			foreign := filepath.Join(dir, tc.file)
			var err error
			if strings.HasSuffix(tc.file, ".locks") {
				err = os.Mkdir(foreign, 0o555)
			} else {
				err = os.WriteFile(foreign, []byte(tc.content), 0o444)
			}
			if err != nil {
				t.Fatal(err)
			}
			if u.other >= 0 {
				if err := os.Chown(foreign, u.other, u.other); err != nil {
					t.Fatal(err)
				}
			}
			got := run(t, u.owner, exe, tc.mode, db, "x")
			if !strings.Contains(got, foreign+" belongs to another user") || !strings.Contains(got, tc.fix) {
				t.Fatalf("the owner's %s beside a foreign %s = %q, want it named with the fix %q", tc.mode, tc.file, got, tc.fix)
			}
			if err := os.RemoveAll(foreign); err != nil {
				t.Fatal(err)
			}
			if got := run(t, u.owner, exe, tc.mode, db, "x"); got != "ok" {
				t.Errorf("the owner's %s once %s is gone = %q", tc.mode, tc.file, got)
			}
		})
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	keys := slices.Sorted(maps.Keys(a))
	for _, k := range keys {
		if v, ok := b[k]; !ok || v != a[k] {
			return false
		}
	}
	return true
}
