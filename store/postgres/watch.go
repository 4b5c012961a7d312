package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"rewind/store"
	"rewind/store/internal/check"
)

var (
	_ store.Watcher     = (*Store)(nil)
	_ store.LockHolders = (*Store)(nil)
)

// notifyChannel is the channel PutCheckpoint NOTIFYs with the thread.
const notifyChannel = "rewind_threads"

// notePayload is what NOTIFY carries for a thread: the id itself, or,
// past 1,000 bytes (a payload holds less than 8,000) and for an id that
// could be mistaken for a hash, "sha256:" and its hash.
func notePayload(thread string) string {
	if len(thread) <= 1000 && !strings.HasPrefix(thread, "sha256:") {
		return thread
	}
	sum := sha256.Sum256([]byte(thread))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// appName is the application_name of this process's sessions: LockHolder
// reads the lock holder's pid from it.
func appName() string { return "rewind pid " + strconv.Itoa(os.Getpid()) }

// Watch implements store.Watcher: LISTEN on a connection of its own (taken
// from the pool and kept) and wait for the thread's notifications, which
// PostgreSQL delivers only for committed transactions. A lost connection
// is replaced, and wakes the watcher once, since a commit may have been
// missed.
func (s *Store) Watch(ctx context.Context, thread string) (<-chan struct{}, error) {
	conn, err := s.listen(ctx)
	if err != nil {
		return nil, s.target.wrap(s.db(err), "watch thread %v", check.Name(thread))
	}
	c := make(chan struct{}, 1)
	wake := func() {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.done:
		case <-wctx.Done():
		}
		cancel()
	}()
	go func() {
		defer close(c)
		defer cancel()
		s.watchLoop(wctx, conn, notePayload(thread), wake)
	}()
	return c, nil
}

// watchLoop waits on conn for the notifications carrying want and wakes
// for each, until ctx ends; a lost connection is replaced, a flood sat
// out (floodMeter), and either wakes once, since a commit may have been
// missed meanwhile.
func (s *Store) watchLoop(ctx context.Context, conn *pgx.Conn, want string, wake func()) {
	defer func() {
		if conn != nil {
			_ = conn.Close(context.Background())
		}
	}()
	var flood floodMeter
	for ctx.Err() == nil {
		if conn == nil {
			var err error
			if conn, err = s.listen(ctx); err != nil {
				conn = nil
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
				continue
			}
			wake() // a commit may have come while no one listened
		}
		n, err := conn.WaitForNotification(ctx)
		switch {
		case err != nil:
			_ = conn.Close(context.Background())
			conn = nil
			continue
		case n.Channel == notifyChannel && n.Payload == want:
			wake()
		}
		if !flood.read(time.Now()) {
			continue
		}
		s.floodPauses.Add(1)
		ok := s.sitOut(ctx, conn, flood.nextPause(time.Now()))
		flood.lastPause = time.Now()
		if !ok {
			_ = conn.Close(context.Background())
			conn = nil
			continue
		}
		wake() // a commit may have come while no one listened
	}
}

// A flood of notifications (any role that can connect may NOTIFY, and
// every commit of every thread does) would cost a watcher the reading of
// each one: past floodBurst within floodWindow it stops listening for
// floodPause (longer while the flood lasts), then listens again and wakes
// its waiter once, which reads whatever was missed.
const (
	floodBurst  = 200
	floodWindow = 100 * time.Millisecond
	floodPause  = 250 * time.Millisecond
	// A flood that goes on doubles the pause, up to floodPauseMax: each
	// pause ends in a wake-up, which costs the waiter a read of the thread.
	floodPauseMax = 2 * time.Second
)

// floodMeter counts the notifications read in the current window.
type floodMeter struct {
	since time.Time
	n     int
	// pause is the next sit-out's length; lastPause when the last one ended.
	pause     time.Duration
	lastPause time.Time
}

// nextPause is how long to stop listening: floodPause, doubled for each
// pause that followed the last one within a second.
func (f *floodMeter) nextPause(now time.Time) time.Duration {
	if f.pause == 0 || now.Sub(f.lastPause) > time.Second {
		f.pause = floodPause
	} else {
		f.pause = min(2*f.pause, floodPauseMax)
	}
	return f.pause
}

// read counts one notification and says whether the window is over its
// burst (and starts a new window when it is).
func (f *floodMeter) read(now time.Time) bool {
	if now.Sub(f.since) > floodWindow {
		f.since, f.n = now, 0
	}
	f.n++
	if f.n <= floodBurst {
		return false
	}
	f.since, f.n = now, 0
	return true
}

// sitOut stops listening on conn for pause and listens again; false when
// the connection failed (or the watch ended) and must be replaced.
func (s *Store) sitOut(ctx context.Context, conn *pgx.Conn, pause time.Duration) bool {
	if _, err := conn.Exec(ctx, "unlisten "+notifyChannel); err != nil {
		return false
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(pause):
	}
	_, err := conn.Exec(ctx, "listen "+notifyChannel)
	return err == nil
}

// listen takes a connection out of the pool for good and LISTENs on it.
func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	conn := pc.Hijack()
	if _, err := conn.Exec(ctx, "listen "+notifyChannel); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return conn, nil
}

// lockHolderSQL finds the session holding the advisory lock on key $1
// (pg_try_advisory_lock(bigint) puts its high half in classid, its low
// half in objid) and what pg_stat_activity shows of it.
const lockHolderSQL = `
select l.pid, coalesce(a.application_name, ''), coalesce(host(a.client_addr), '')
from pg_locks l left join pg_stat_activity a on a.pid = l.pid
where l.locktype = 'advisory' and l.granted and l.objsubid = 1
  and l.database = (select oid from pg_database where datname = current_database())
  and l.classid = ((($1::bigint >> 32) & 4294967295)::bigint)::oid
  and l.objid = (($1::bigint & 4294967295)::bigint)::oid
limit 1`

// LockHolder implements store.LockHolders from pg_locks and
// pg_stat_activity: "pid N" for a rewind process (its application_name),
// with " on ADDRESS" when it connected from another machine; the server
// process otherwise.
func (s *Store) LockHolder(ctx context.Context, thread string) (_ string, err error) {
	defer s.fail(&err, "lock holder of thread %v", check.Name(thread))
	var backend int64
	var app, addr string
	err = s.pool.QueryRow(ctx, lockHolderSQL, lockKey(thread)).Scan(&backend, &app, &addr)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", s.db(err)
	}
	who := fmt.Sprintf("server process %d", backend)
	if rest, ok := strings.CutPrefix(app, "rewind pid "); ok {
		who = "pid " + rest
	} else if app != "" {
		who += " (" + app + ")"
	}
	if addr != "" && addr != "127.0.0.1" && addr != "::1" {
		who += " on " + addr
	}
	return who, nil
}
