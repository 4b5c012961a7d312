package sqlite

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"rewind/store"
	"rewind/store/internal/check"
)

var (
	_ store.Watcher     = (*Store)(nil)
	_ store.LockHolders = (*Store)(nil)
)

// pollEvery is how often a watcher asks SQLite whether another connection
// committed. A poll is one PRAGMA on an idle connection: 5 a second cost
// next to nothing.
const pollEvery = 200 * time.Millisecond

// sqlSignature changes when the thread gets a checkpoint (or loses some).
const sqlSignature = `SELECT coalesce(max(checkpoint_id), 0), count(*) FROM graph_checkpoints WHERE thread_id = ?`

// Watch implements store.Watcher. Each watcher polls PRAGMA data_version on
// a connection of its own, which changes when any other connection (of
// this process or another) commits; a rolled-back transaction leaves it
// as it was. When it changed, the thread's newest id and count tell
// whether the commit was the thread's.
func (s *Store) Watch(ctx context.Context, thread string) (_ <-chan struct{}, err error) {
	defer s.wrap(ctx, &err, "watch thread %v", check.Name(thread))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", s.watchDSN)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	var version, newest, count int64
	read := func(ctx context.Context) error {
		if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&version); err != nil {
			return err
		}
		return conn.QueryRowContext(ctx, sqlSignature, thread).Scan(&newest, &count)
	}
	if err := read(ctx); err != nil {
		conn.Close()
		db.Close()
		return nil, err
	}
	c := make(chan struct{}, 1)
	go func() {
		defer close(c)
		defer db.Close()
		defer conn.Close()
		tick := time.NewTicker(pollEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.done:
				return
			case <-tick.C:
			}
			var v int64
			if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil || v == version {
				continue // an error is a busy moment: the next poll asks again
			}
			n, k := newest, count
			if err := read(ctx); err != nil {
				version = v - 1 // ask again at the next poll
				continue
			}
			if newest != n || count != k {
				select {
				case c <- struct{}{}:
				default:
				}
			}
		}
	}()
	return c, nil
}

// lockFile is the file Lock flocks for thread.
func (s *Store) lockFile(thread string) string {
	sum := sha256.Sum256([]byte(thread))
	return filepath.Join(s.locks, hex.EncodeToString(sum[:]))
}

// LockHolder implements store.LockHolders without touching the lock: on
// Linux, /proc/locks names the process holding the lock file's flock; else
// the pid the holder wrote in the file, if that process is alive.
func (s *Store) LockHolder(ctx context.Context, thread string) (_ string, err error) {
	defer s.wrap(ctx, &err, "lock holder of thread %v", check.Name(thread))
	if err := ctx.Err(); err != nil {
		return "", err
	}
	file := s.lockFile(thread)
	info, err := os.Stat(file)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		if pid, found, err := flockHolder(st.Ino); err == nil {
			if !found {
				return "", nil
			}
			return "pid " + strconv.Itoa(pid), nil
		}
	}
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	text := strings.TrimSpace(string(b))
	if text == "" {
		return "", nil // released: an unlocked file is left empty
	}
	pid, err := strconv.Atoi(text)
	if err != nil || pid <= 0 {
		return "another process", nil
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return "", nil // a killed holder's file
	}
	return "pid " + strconv.Itoa(pid), nil
}

// flockHolder finds the process holding a FLOCK on inode ino in
// /proc/locks (Linux): "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF".
func flockHolder(ino uint64) (pid int, found bool, err error) {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	suffix := ":" + strconv.FormatUint(ino, 10)
	in := bufio.NewScanner(f)
	for in.Scan() {
		fields := strings.Fields(in.Text())
		// A blocked waiter's line starts "1: ->": skip it.
		if len(fields) < 6 || fields[1] != "FLOCK" || !strings.HasSuffix(fields[5], suffix) {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil {
			return pid, true, nil
		}
	}
	if err := in.Err(); err != nil {
		return 0, false, fmt.Errorf("read /proc/locks: %w", err)
	}
	return 0, false, nil
}
