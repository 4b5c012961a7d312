// Command contender is one of the two processes of store/sqlite's
// TestContentionIsAbsorbed: it runs REWIND_CONTENTION_COMMANDS commands
// on the file REWIND_CONTENTION_DB as a shell running rewind in a loop
// would, prints "fail N: …" for each that failed and "ran N" at the end.
// The one named b (REWIND_CONTENTION_HELPER) holds the file's write lock
// for REWIND_CONTENTION_HOLD before its tenth command.
//
// Built without -race (rewindbin.Tool), as rewind is: under -race these
// two processes were 15 of the test's 17 s of CPU, in code the package's
// raced tests run in-process already.
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"rewind/store"
	"rewind/store/sqlite"
)

func main() {
	name := os.Getenv("REWIND_CONTENTION_HELPER")
	path := os.Getenv("REWIND_CONTENTION_DB")
	n, err := strconv.Atoi(os.Getenv("REWIND_CONTENTION_COMMANDS"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "contender: REWIND_CONTENTION_COMMANDS: %v\n", err)
		os.Exit(2)
	}
	hold, err := time.ParseDuration(os.Getenv("REWIND_CONTENTION_HOLD"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "contender: REWIND_CONTENTION_HOLD: %v\n", err)
		os.Exit(2)
	}
	ran := 0
	for i := range n {
		if name == "b" && i == 10 {
			if err := holdWriteLock(path, hold); err != nil {
				fmt.Printf("fail %d: hold the write lock: %v\n", i, err)
			}
		}
		if err := command(path, fmt.Sprintf("%s-%d", name, i%8), i); err != nil {
			fmt.Printf("fail %d: %v\n", i, err)
		}
		ran++
	}
	fmt.Printf("ran %d\n", ran)
}

// holdWriteLock holds the file's write lock for hold.
func holdWriteLock(path string, hold time.Duration) error {
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
	time.Sleep(hold)
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
