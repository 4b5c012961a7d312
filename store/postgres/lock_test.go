package postgres

import (
	"context"
	"errors"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"rewind/store"
	"rewind/store/postgres/pgtest"
)

// heldConn is the connection holding the store's only lock.
func heldConn(t *testing.T, s *Store) *pgx.Conn {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.locks) != 1 {
		t.Fatalf("%d lock connections, want 1", len(s.locks))
	}
	for c := range s.locks {
		return c
	}
	return nil
}

func spares(s *Store) []*pgx.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*pgx.Conn
	for _, sc := range s.spare {
		out = append(out, sc.conn)
	}
	return out
}

func settings(t *testing.T, conn *pgx.Conn) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, name := range lockSettings {
		var v string
		if err := conn.QueryRow(context.Background(), `select setting from pg_settings where name = $1`, name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		got[name] = v
	}
	return got
}

func backendPID(conn *pgx.Conn) uint32 { return conn.PgConn().PID() }

// A released lock's connection is reused by the next Lock, with the
// session as a fresh connection has it; a refused Lock leaves it as it
// was.
func TestLockReusesConnection(t *testing.T) {
	t.Parallel()
	s, dbURL := openFresh(t)
	ctx := context.Background()
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fresh := settings(t, pc.Conn())
	pc.Release()

	release, err := s.Lock(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	conn := heldConn(t, s)
	pid := backendPID(conn)
	if got := settings(t, conn); got["idle_session_timeout"] != "0" || got["tcp_keepalives_idle"] != "60" {
		t.Errorf("held lock's session settings = %v", got)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	sp := spares(s)
	if len(sp) != 1 || sp[0] != conn {
		t.Fatalf("after release, spares = %v, want the lock's connection", sp)
	}
	if got := settings(t, conn); !maps.Equal(got, fresh) {
		t.Errorf("released lock's session settings = %v, want a fresh connection's %v", got, fresh)
	}
	var locks int
	if err := conn.QueryRow(ctx, `select count(*) from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()`).Scan(&locks); err != nil || locks != 0 {
		t.Fatalf("the released connection holds %d advisory locks, %v", locks, err)
	}

	r2, err := s.Lock(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if got := backendPID(heldConn(t, s)); got != pid {
		t.Errorf("the next Lock ran on backend %d, want the spare %d", got, pid)
	}
	// Refused on a spare: the spare stays one, its session untouched.
	if err := r2(); err != nil {
		t.Fatal(err)
	}
	other, err := Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ro, err := other.Lock(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	defer ro()
	if _, err := s.Lock(ctx, "c"); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("Lock of a thread held elsewhere = %v, want ErrLocked", err)
	}
	if sp := spares(s); len(sp) != 1 || sp[0] != conn {
		t.Fatalf("after a refused Lock, spares = %v, want the one", sp)
	}
	if got := settings(t, conn); !maps.Equal(got, fresh) {
		t.Errorf("a refused Lock changed the session: %v, want %v", got, fresh)
	}
	// Close closes the spares too.
	s.Close()
	if !conn.IsClosed() {
		t.Error("Close left a spare lock connection open")
	}
}

// A spare the server closed (here idle_session_timeout, once the release
// gave the session its default back) is not used: the next Lock pings it,
// drops it and takes a fresh connection.
func TestLockSpareClosedByServer(t *testing.T) {
	t.Parallel()
	s, dbURL := openFresh(t)
	ctx := context.Background()
	adminExec(t, dbURL, `do $$ begin execute format('alter database %I set idle_session_timeout = 500', current_database()); end $$`)
	s.pool.Reset()
	release, err := s.Lock(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	conn := heldConn(t, s)
	time.Sleep(800 * time.Millisecond) // held: exempt
	if err := release(); err != nil {
		t.Fatalf("release after an idle while held: %v", err)
	}
	time.Sleep(1500 * time.Millisecond) // released: the server drops it
	release, err = s.Lock(ctx, "t")
	if err != nil {
		t.Fatalf("Lock after the server dropped the spare: %v", err)
	}
	if heldConn(t, s) == conn {
		t.Error("Lock used the spare the server had closed")
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
}

// A lock whose connection broke is not reused: the release reports it and
// the next Lock takes another connection.
func TestLockBrokenConnectionNotReused(t *testing.T) {
	t.Parallel()
	s, dbURL := openFresh(t)
	ctx := context.Background()
	release, err := s.Lock(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	conn := heldConn(t, s)
	adminExec(t, dbURL, `select pg_terminate_backend($1::int)`, int(conn.PgConn().PID()))
	if err := release(); err == nil {
		t.Error("release on a killed connection reported no error")
	}
	if sp := spares(s); len(sp) != 0 {
		t.Errorf("a broken lock connection became a spare")
	}
	r := waitLock(t, s, "t")
	if err := r(); err != nil {
		t.Fatal(err)
	}
}

// openCounting opens a store on a fresh database whose connections count
// the round trips and the connections made.
func openCounting(t *testing.T) (s *Store, writes, dials *atomic.Int64) {
	t.Helper()
	writes, dials = new(atomic.Int64), new(atomic.Int64)
	s, err := open(context.Background(), freshDB(t), pgtest.Counting(writes, dials))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, writes, dials
}

// A run's writer lock costs one round trip to take and one to release,
// and no new connection, once the process has run a thread before.
func TestLockRoundTrips(t *testing.T) {
	t.Parallel()
	s, writes, dials := openCounting(t)
	ctx := context.Background()
	run := func() (int64, int64) {
		w, d := writes.Load(), dials.Load()
		release, err := s.Lock(ctx, "t")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Fence(ctx, "t"); err != nil { // the run's own work
			t.Fatal(err)
		}
		if err := release(); err != nil {
			t.Fatal(err)
		}
		return writes.Load() - w, dials.Load() - d
	}
	run() // the first run of a process connects and prepares its statements
	run()
	rt, conns := run()
	if want := int64(3); rt != want || conns != 0 {
		t.Errorf("a run's lock, fence and release took %d round trips and %d new connections, want %d and 0", rt, conns, want)
	}
	// A spare idle for more than a second is pinged first, as pgxpool does.
	time.Sleep(1100 * time.Millisecond)
	if rt, conns := run(); rt > 5 || conns != 0 {
		t.Errorf("after an idle second, a run took %d round trips and %d new connections", rt, conns)
	}
}

// BenchmarkLockRelease is a run's writer-lock overhead: lock and release
// one thread.
func BenchmarkLockRelease(b *testing.B) {
	s, _ := openFresh(b)
	ctx := context.Background()
	for b.Loop() {
		release, err := s.Lock(ctx, "bench")
		if err != nil {
			b.Fatal(err)
		}
		if err := release(); err != nil {
			b.Fatal(err)
		}
	}
}
