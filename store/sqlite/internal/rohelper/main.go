// Command rohelper is the child of store/sqlite's read-only tests
// (readonly_test.go), run as the store's owner or as a user who may only
// read it. It opens the store REWIND_RO_DB names and does one thing,
// REWIND_RO_HELPER: "read" lists the threads, "put" writes the first
// checkpoint of thread REWIND_RO_THREAD, "lock" locks that thread, "hold"
// puts and then keeps the store open until stdin closes. It prints "ok"
// (or the threads), or "error …" on one line. With REWIND_RO_CRASH set it
// exits without closing the store, as a crash leaves the WAL behind.
// Built without -race (rewindbin.Tool), as rewind is: the tests are about
// the files these processes leave, and a raced copy of the test binary
// was most of their CPU.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"rewind/store"
	"rewind/store/sqlite"
)

func main() {
	mode := os.Getenv("REWIND_RO_HELPER")
	if mode == "" {
		fmt.Fprintln(os.Stderr, "rohelper: REWIND_RO_HELPER names no part to play; run it through store/sqlite's read-only tests")
		os.Exit(1)
	}
	ctx := context.Background()
	say := func(what string, err error) {
		if err != nil {
			what = "error " + strings.ReplaceAll(err.Error(), "\n", " ")
		}
		fmt.Println(what)
	}
	s, err := sqlite.Open(ctx, os.Getenv("REWIND_RO_DB"))
	if err != nil {
		say("", err)
		return
	}
	thread := os.Getenv("REWIND_RO_THREAD")
	switch mode {
	case "read":
		ts, err := s.Threads(ctx)
		var ids []string
		for _, th := range ts {
			ids = append(ids, th.ID)
		}
		say("threads "+strings.Join(ids, ","), err)
	case "put", "hold":
		say("ok", s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: thread, ID: 1, State: []byte(`{}`)}, nil))
		if mode == "hold" {
			_, _ = io.Copy(io.Discard, os.Stdin)
		}
	case "lock":
		_, err := s.Lock(ctx, thread)
		say("ok", err)
	default:
		fmt.Fprintf(os.Stderr, "rohelper: unknown part %q (read, put, hold or lock)\n", mode)
		os.Exit(1)
	}
	if os.Getenv("REWIND_RO_CRASH") == "" { // a crash leaves the WAL behind
		s.Close()
	}
}
