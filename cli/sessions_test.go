package cli_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"rewind/store/langgraph/lgtest"
	"rewind/store/postgres/pgtest"
)

// A command is a new process, and each PostgreSQL session it opens costs
// the server 30-60 ms of CPU to start and end: a read command opens one
// (what the database holds is read on the connection the store, or the
// LangGraph reader, then reads on), a command that writes two (its
// thread's lock is a session lock on a connection of its own, so that a
// writer that dies frees it). Counted by the server, in
// pg_stat_database.sessions of each database (PostgreSQL 14 and later).
func TestACommandOpensOnlyTheSessionsItNeeds(t *testing.T) {
	t.Parallel()
	if !pgtest.Available(t) {
		return
	}
	admin := pgtest.Admin(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin) // the admin database: not counted
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	v := conn.PgConn().ParameterStatus("server_version")
	if major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0]); major < 14 {
		t.Skipf("PostgreSQL %s counts no sessions (pg_stat_database.sessions is 14's)", v)
	}
	rewindDB := pgtest.Fresh(t, "rewind_sessions")
	lg := lgtest.Dump(t, "postgres-python.sql")

	// A command's count after it is the next command's before: nothing
	// else opens these databases, and each count waits 360 ms at least.
	settled := map[string]int64{}
	count := func(spec string, want int, args ...string) {
		t.Helper()
		db := pgtest.Name(spec)
		before, ok := settled[db]
		if !ok {
			before = sessionsOf(t, conn, db)
		}
		r := rewind(t, nil, append(args, "--store", spec)...)
		if r.code != 0 {
			t.Fatalf("rewind %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
		after := sessionsOf(t, conn, db)
		settled[db] = after
		if got := after - before; got != int64(want) {
			t.Errorf("rewind %s on %s opened %d PostgreSQL sessions, want %d", strings.Join(args, " "), db, got, want)
		}
	}
	count(rewindDB, 2, "run", "--thread", "t1", "--input", "my order never came") // creates the store
	count(rewindDB, 2, "run", "--thread", "t1", "--input", "any news?")
	for _, read := range [][]string{{"threads"}, {"log", "t1"}, {"show", "t1"}, {"events", "t1"}, {"search", "t1", "order"}, {"diff", "t1", "1", "2"}} {
		count(rewindDB, 1, read...)
	}
	for _, read := range [][]string{{"threads"}, {"log", "t-main"}, {"show", "t-main"}, {"search", "t-main", "weather"}} {
		count(lg, 1, read...)
	}
}

// sessionsOf is the number of sessions database db has had, once none is
// open and the count holds still (a session's count reaches the
// statistics as its backend exits, a moment after the client left).
func sessionsOf(t *testing.T, conn *pgx.Conn, db string) int64 {
	t.Helper()
	ctx := context.Background()
	last, same := int64(-1), 0
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(60 * time.Millisecond) {
		var open, n int64
		err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_stat_activity WHERE datname = $1),
			(SELECT coalesce(sessions, 0) FROM pg_stat_database WHERE datname = $1)`, db).Scan(&open, &n)
		if err != nil {
			t.Fatalf("count the sessions of %s: %v", db, err)
		}
		// The same for seven reads over 360 ms: a loaded server reports an
		// ending session's count late.
		if open == 0 && n == last {
			if same++; same == 6 {
				return n
			}
			continue
		}
		same = 0
		if time.Now().After(deadline) {
			t.Fatalf("database %s still has %d sessions open, or its count moves (%d, was %d), 15 s after the command", db, open, n, last)
		}
		if open == 0 {
			last = n
		} else {
			last = -1
		}
	}
}
