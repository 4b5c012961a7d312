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
func (s *Store) Lock(ctx context.Context, thread string) (_ func() error, err error) {
	defer s.wrap(ctx, &err, "lock thread %v", check.Name(thread))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.readOnly != "" { // a lock directory made now would be another user's
		return nil, errors.New(s.readOnly)
	}
	if err := foreignLocks(s.locks); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.locks, 0o700); err != nil {
		return nil, fmt.Errorf("create the lock directory: %w; the database's directory must be writable", err)
	}
	file := s.lockFile(thread)
	for {
		f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open the lock file: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, store.ErrLocked
			}
			return nil, fmt.Errorf("flock the lock file: %w", err)
		}
		// A releasing holder removes the file while it still holds it; if we
		// locked such a removed file, it protects nothing: try again.
		if same, err := onDisk(f, file); err != nil || !same {
			f.Close()
			if err != nil {
				return nil, err
			}
			continue
		}
		// Who holds it, for LockHolder where /proc/locks cannot tell; best
		// effort: the lock is the flock, not this.
		if f.Truncate(0) == nil {
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		return sync.OnceValue(func() error {
			rmErr := os.Remove(file)
			if err := errors.Join(rmErr, f.Close()); err != nil {
				return fmt.Errorf("sqlite store %s: release the lock of thread %v: %w", s.path, check.Name(thread), err)
			}
			return nil
		}), nil
	}
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
