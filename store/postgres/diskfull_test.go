package postgres

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"rewind/store"
)

// The server's disk_full (SQLSTATE 53100) is a full disk, named as the
// sqlite store names one: the engine's "then rewind resume T" hangs on
// store.ErrDiskFull. (A real full disk under a running server is not
// something a test can make here: its data directory is not ours to fill.)
func TestTheServersFullDiskIsNamed(t *testing.T) {
	t.Parallel()
	s := &Store{target: target{user: "rewind", host: "127.0.0.1", port: 5432, database: "rewind"}}
	full := &pgconn.PgError{Code: "53100", Message: `could not extend file "base/16384/16402": No space left on device`}
	err := s.db(full)
	if !errors.Is(err, store.ErrDiskFull) || !errors.Is(err, full) {
		t.Fatalf("%v: want store.ErrDiskFull wrapping the server's error", err)
	}
	if !strings.Contains(err.Error(), "No space left on device") || !strings.Contains(err.Error(), "is full: free space on the server") {
		t.Errorf("%q: want the server's words and the fix", err)
	}
	if other := s.db(&pgconn.PgError{Code: "53200", Message: "out of memory"}); errors.Is(other, store.ErrDiskFull) {
		t.Errorf("out of memory read as a full disk: %v", other)
	}
}
