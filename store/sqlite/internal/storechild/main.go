// Command storechild is the child of store/sqlite's conformance process
// tests (storetest.Child): it opens the file the test names and plays the
// part it is given. Built without -race (rewindbin.Tool), as rewind is:
// with raced copies of the test binary those tests took twice the CPU.
package main

import (
	"context"
	"database/sql"

	"rewind/store"
	"rewind/store/sqlite"
	"rewind/store/storetest"
)

func main() {
	storetest.Child(storetest.Backend{
		Reopen:   func(ctx context.Context, path string) (store.Store, error) { return sqlite.Open(ctx, path) },
		HoldRead: holdRead,
	})
}

// holdRead is another program's read: a read transaction on its own
// connection, as the sqlite3 shell's BEGIN; SELECT holds one.
func holdRead(ctx context.Context, path string) (func() error, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var n int
	if _, err := conn.ExecContext(ctx, `BEGIN`); err != nil {
		return nil, err
	}
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM graph_checkpoints`).Scan(&n); err != nil {
		return nil, err
	}
	return func() error { _, err := conn.ExecContext(ctx, `COMMIT`); return err }, nil
}
