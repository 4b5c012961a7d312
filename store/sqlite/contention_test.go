package sqlite_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"rewind/store"
	"rewind/store/sqlite"
)

// contentionCommands is how many commands each of the two processes runs
// (REWIND_CONTENTION_COMMANDS sets it: 1,000 each ran clean too): few
// enough for CI (150 took 44 s under -race on this shared machine, 8 s
// without); the old store failed them all the same, behind holdFor.
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
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		name     string
		failures []string
		ran      int
		err      error
	}
	done := make(chan result)
	for _, name := range []string{"a", "b"} {
		go func() {
			cmd := exec.Command(exe, "-test.run=^TestContentionHelper$")
			// GORACE: under -race, a process sleeps a second as it exits.
			cmd.Env = append(os.Environ(), "REWIND_CONTENTION_HELPER="+name, "REWIND_CONTENTION_DB="+path,
				"REWIND_CONTENTION_COMMANDS="+strconv.Itoa(contentionCommands), "GORACE=atexit_sleep_ms=0")
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

// TestContentionHelper is a process of TestContentionIsAbsorbed.
func TestContentionHelper(t *testing.T) {
	t.Parallel()
	name := os.Getenv("REWIND_CONTENTION_HELPER")
	if name == "" {
		t.Skip("a helper process of TestContentionIsAbsorbed")
	}
	path := os.Getenv("REWIND_CONTENTION_DB")
	n, _ := strconv.Atoi(os.Getenv("REWIND_CONTENTION_COMMANDS"))
	ran := 0
	for i := range n {
		if name == "b" && i == 10 {
			if err := holdWriteLock(path); err != nil {
				fmt.Printf("fail %d: hold the write lock: %v\n", i, err)
			}
		}
		if err := command(path, fmt.Sprintf("%s-%d", name, i%8), i); err != nil {
			fmt.Printf("fail %d: %v\n", i, err)
		}
		ran++
	}
	fmt.Printf("ran %d\n", ran)
	os.Exit(0)
}

// holdWriteLock holds the file's write lock for holdFor.
func holdWriteLock(path string) error {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(60000)")
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		return err
	}
	time.Sleep(holdFor)
	_, err = conn.ExecContext(ctx, `COMMIT`)
	return err
}

// command is one rewind command's work on the store: open, fence, a turn
// (eight checkpoints with their task writes), read back, every fourth a
// delete, close.
func command(path, thread string, i int) (err error) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := s.Close(); err == nil {
			err = cerr
		}
	}()
	if i%4 == 3 {
		if err := s.DeleteThread(ctx, thread); !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return nil
	}
	epoch, err := s.Fence(ctx, thread)
	if err != nil {
		return err
	}
	latest, err := s.Latest(ctx, thread)
	var from int64
	switch {
	case err == nil:
		from = latest.ID
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	state := []byte(`{"text":"` + strings.Repeat("a turn's words ", 200) + `"}`)
	for id := from + 1; id <= from+8; id++ {
		parent := id - 1
		c := store.Checkpoint{ThreadID: thread, ID: id, ParentID: parent, State: state, Base: true, Epoch: epoch}
		if err := s.PutCheckpoint(ctx, c, []store.Event{{Type: "node", Payload: []byte(`{}`)}}); err != nil {
			return err
		}
		if err := s.PutWrites(ctx, store.TaskWrites{ThreadID: thread, CheckpointID: id, TaskID: "task", Writes: state, Epoch: epoch}); err != nil {
			return err
		}
	}
	if _, err := s.History(ctx, thread, 0, 20); err != nil {
		return err
	}
	_, err = s.Threads(ctx)
	return err
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
