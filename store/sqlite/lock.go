package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"

	"rewind/store"
	"rewind/store/internal/check"
)

// Lock takes flock(LOCK_EX|LOCK_NB) on <path>.locks/<sha256(thread)>. The
// kernel drops a flock with its process, even on SIGKILL, and two open files
// exclude each other even within one process.
//
// The file stays open, unlocked, after a release, and is removed by Close:
// creating and unlinking it on every run cost more than half a millisecond
// a turn, on a filesystem with slow metadata.
func (s *Store) Lock(ctx context.Context, thread string) (_ func() error, err error) {
	defer s.wrap(ctx, &err, "lock thread %v", check.Name(thread))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.readOnly != "" { // a lock directory made now would be another user's
		return nil, errors.New(s.readOnly)
	}
	s.lockMu.Lock()
	defer s.lockMu.Unlock()
	l := s.lockFiles[thread]
	if l != nil && l.held {
		return nil, store.ErrLocked // this Store's own open file holds it
	}
	file := s.lockFile(thread)
	for {
		if l == nil {
			if err := foreignLocks(s.locks); err != nil {
				return nil, err
			}
			if err := os.MkdirAll(s.locks, 0o700); err != nil {
				return nil, fmt.Errorf("create the lock directory: %w; the database's directory must be writable", err)
			}
			f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				return nil, fmt.Errorf("open the lock file: %w", err)
			}
			l = &lockFile{f: f}
			if s.lockFiles == nil {
				s.lockFiles = map[string]*lockFile{}
			}
			s.lockFiles[thread] = l
		}
		if err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, store.ErrLocked
			}
			s.dropLock(thread, l)
			return nil, fmt.Errorf("flock the lock file: %w", err)
		}
		// A releasing holder (an older rewind, or a Store closing) removes
		// the file while it still holds it; if we locked such a removed
		// file, it protects nothing: try again with the file there now.
		if same, err := onDisk(l.f, file); err != nil || !same {
			s.dropLock(thread, l)
			if err != nil {
				return nil, err
			}
			l = nil
			continue
		}
		// Who holds it, for LockHolder where /proc/locks cannot tell; best
		// effort: the lock is the flock, not this.
		if l.f.Truncate(0) == nil {
			_, _ = l.f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		l.held = true
		return sync.OnceValue(func() error { return s.unlock(thread, l) }), nil
	}
}

// lockFile is a thread's lock file this Store has open; held while a Lock
// of it is not released.
type lockFile struct {
	f    *os.File
	held bool
}

// unlock releases l: the file stays open for the next Lock, empty (no pid
// for LockHolder to name). The commits made under it reach the disk first
// (see lazy).
func (s *Store) unlock(thread string, l *lockFile) error {
	synced := s.syncWAL()
	s.lockMu.Lock()
	defer s.lockMu.Unlock()
	if s.lockFiles[thread] != l {
		return synced // Close closed it, which released it
	}
	l.held = false
	var err error
	if len(s.lockFiles) > maxLockFiles {
		// Too many kept open: this one goes as a release did before, its
		// file removed under its flock (closing drops the flock).
		if rm := os.Remove(s.lockFile(thread)); rm != nil && !errors.Is(rm, os.ErrNotExist) {
			err = rm
		}
		s.dropLock(thread, l)
	} else {
		_ = l.f.Truncate(0)
		err = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	}
	if err != nil {
		return errors.Join(synced, fmt.Errorf("sqlite store %s: release the lock of thread %v: %w", s.path, check.Name(thread), err))
	}
	return synced
}

// maxLockFiles bounds the lock files a Store keeps open (one descriptor
// each): past it a released one is closed.
const maxLockFiles = 32

// dropLock closes l and forgets it. Callers hold lockMu.
func (s *Store) dropLock(thread string, l *lockFile) {
	_ = l.f.Close()
	if s.lockFiles[thread] == l {
		delete(s.lockFiles, thread)
	}
}

// closeLocks removes the lock files this Store kept open, each under its
// flock as a release did, unless another process holds it now; for Close.
func (s *Store) closeLocks() error {
	s.lockMu.Lock()
	defer s.lockMu.Unlock()
	var errs []error
	for thread, l := range s.lockFiles {
		if l.held || syscall.Flock(int(l.f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			if same, err := onDisk(l.f, s.lockFile(thread)); err == nil && same {
				if err := os.Remove(s.lockFile(thread)); err != nil && !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, err)
				}
			}
		}
		s.dropLock(thread, l)
	}
	return errors.Join(errs...)
}

// onDisk reports whether f is still the file at path.
func onDisk(f *os.File, path string) (bool, error) {
	held, err := f.Stat()
	if err != nil {
		return false, err
	}
	now, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil && os.SameFile(held, now), err
}
