package sqlite

import (
	"bufio"
	"context"
	"crypto/rand"
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
)

// Erasing (store.Erasing): what a delete leaves in the files while another
// connection reads.
//
// secure_delete zeroes a deleted row in the page a delete writes, but in
// WAL mode that page goes to the WAL, and the file keeps the old one until
// a checkpoint copies the new one over it; the WAL keeps its older frames
// until it starts over. Neither can happen past a read that began before
// the delete: SQLite keeps what that read sees. So DeleteThread empties the
// WAL (wipeWAL) when it can, and when a reader keeps it from doing so it
// leaves a marker, <db>.locks/wipe-<random>, that carries the pending wipe
// to whichever rewind process next opens or closes the store: Open and
// Close wipe when a marker is there, and a wipe that emptied the WAL
// removes the markers it saw before it began. The same Store's next write
// tries again too (unwiped).

// wipePrefix begins a pending-wipe marker's name in the lock directory.
const wipePrefix = "wipe-"

var _ store.Erasing = (*Store)(nil)

// wipeMarkers lists the pending-wipe markers beside the database.
func (s *Store) wipeMarkers() []string {
	ents, err := os.ReadDir(s.locks)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), wipePrefix) {
			out = append(out, filepath.Join(s.locks, e.Name()))
		}
	}
	return out
}

// markWipe leaves a marker of a wipe a reader kept from happening. Best
// effort: the delete is committed, and this Store retries anyway.
func (s *Store) markWipe() {
	if foreignLocks(s.locks) != nil || os.MkdirAll(s.locks, 0o700) != nil {
		return
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	f, err := os.OpenFile(filepath.Join(s.locks, wipePrefix+hex.EncodeToString(b[:])), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return
	}
	_, _ = fmt.Fprintf(f, "a delete by pid %d at %s left deleted text in the WAL while another connection read; the next rewind to open or close the store erases it\n",
		os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	_ = f.Close()
}

// unmarkWipes removes the markers a wipe that emptied the WAL saw before
// it began.
func (s *Store) unmarkWipes(markers []string) {
	for _, m := range markers {
		_ = os.Remove(m)
	}
}

// retryWipe tries a pending wipe once more (s.w.mu held): this Store's
// own (unwiped), or the one the markers beside the database stand for
// (Open, Close, Unerased). A wipe that only markers ask for and a reader
// still keeps from happening is left to them: this Store's writes do not
// wait on that reader again.
func (s *Store) retryWipe(ctx context.Context) {
	if s.readOnly != "" || s.w.closed {
		return
	}
	own := s.unwiped.Load()
	if !own && len(s.wipeMarkers()) == 0 {
		return
	}
	s.wipeWAL(ctx)
	if !own {
		s.unwiped.Store(false)
	}
}

// Unerased implements store.Erasing: it tries the pending wipe once more,
// then names what keeps it from happening.
func (s *Store) Unerased(ctx context.Context) (_ string, err error) {
	defer s.wrap(ctx, &err, "erasure of deleted text")
	if err := ctx.Err(); err != nil {
		return "", err
	}
	pending := func() bool { return s.unwiped.Load() || len(s.wipeMarkers()) > 0 }
	if !pending() {
		return "", nil
	}
	s.w.mu.Lock()
	s.retryWipe(ctx)
	s.w.mu.Unlock()
	if !pending() {
		return "", nil
	}
	abs, _ := filepath.Abs(s.path)
	pids, err := walLockers(abs + "-shm")
	if err != nil || len(pids) == 0 {
		return "a read by another connection", nil
	}
	words := make([]string, len(pids))
	for i, p := range pids {
		words[i] = strconv.Itoa(p)
	}
	if len(pids) == 1 {
		return "a read by pid " + words[0], nil
	}
	return "reads by pids " + strings.Join(words, ", "), nil
}

// walLockers names the other processes holding SQLite's WAL locks on the
// database's -shm file (the writer, checkpointer, recovery and reader
// locks, bytes 120-127; not 128, which every connection holds while the
// file is open), from /proc/locks (Linux). SQLite takes them with
// fcntl, per process: this process's own do not show. Opening the -shm
// file to ask with F_GETLK is out: closing it would drop every fcntl lock
// this process's connections hold on it.
func walLockers(shm string) ([]int, error) {
	info, err := os.Stat(shm)
	if err != nil {
		return nil, err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, errors.New("no inode")
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	suffix, self := ":"+strconv.FormatUint(st.Ino, 10), os.Getpid()
	var pids []int
	seen := map[int]bool{}
	in := bufio.NewScanner(f)
	for in.Scan() {
		// "1: POSIX  ADVISORY  READ 1234 08:01:5678 123 123"; a blocked
		// waiter's line has "->" after the number: skip it.
		fields := strings.Fields(in.Text())
		if len(fields) < 8 || fields[1] != "POSIX" || !strings.HasSuffix(fields[5], suffix) {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		start, err1 := strconv.ParseInt(fields[6], 10, 64)
		if err != nil || err1 != nil || pid <= 0 || pid == self || seen[pid] || start > 127 {
			continue
		}
		if end, err := strconv.ParseInt(fields[7], 10, 64); err == nil && end < 120 {
			continue
		}
		seen[pid] = true
		pids = append(pids, pid)
	}
	return pids, in.Err()
}
