package sqlite

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// access decides how this process opens the store file at path, which
// exists.
//
// SQLite keeps two files beside a WAL database, -wal and -shm, and makes
// them when it opens the database, even to read it, owned by whoever opened
// it and with the database file's mode. A user who may read the store but
// not write it would leave them behind, and the owner could not write the
// store any more ("attempt to write a readonly database"). So:
//
//   - a file this process cannot write is opened read-only without making
//     anything: with mode=ro when the -wal and -shm of a writer are there
//     and readable (SQLite then reads them without writing), immutable
//     when there is no WAL or an empty one (the file is whole), and not at
//     all when commits wait in a WAL it cannot read that way. readOnly
//     says why, for the errors of writes;
//   - a writable file beside a -wal or -shm that this process cannot
//     write is refused, naming the file and the fix (and Lock does the
//     same for a lock directory: see foreignLocks).
func access(path string) (params, readOnly string, err error) {
	if !writable(path) {
		wal, shm := path+"-wal", path+"-shm"
		switch {
		case readable(wal) && readable(shm):
			params = "mode=ro&"
		case size(wal) <= 0:
			params = "immutable=1&"
		default:
			return "", "", fmt.Errorf("open sqlite store %s: this user (%s) cannot write it (%s), and cannot read the commits not yet folded into it from %s (%s) without making files of its own beside it: run rewind as its owner (closing, it folds them in), or make %s and %s readable for this user",
				path, me(), owner(path), wal, owner(wal), wal, shm)
		}
		return params, fmt.Sprintf("this user (%s) cannot write %s (%s), so the store is open read-only: run rewind as its owner, or make the file writable for this user",
			me(), path, owner(path)), nil
	}
	for _, f := range []string{path + "-shm", path + "-wal"} {
		if !deniedWrite(f) {
			continue
		}
		fix := fmt.Sprintf("remove it (rm %s) while no rewind uses the store: it holds no data", f)
		if f == path+"-wal" && size(f) > 0 {
			fix = fmt.Sprintf("do not delete it (it may hold the newest checkpoints): run rewind once as its owner, or give it to this user (as root: chown %s %s)", me(), f)
		}
		return "", "", fmt.Errorf("open sqlite store %s: %s belongs to another user (%s) and this user (%s) cannot write it, so SQLite cannot use the store (another user opened it and left it): %s",
			path, f, owner(f), me(), fix)
	}
	return "", "", nil
}

// foreignLocks refuses a lock directory this process cannot write, left
// by another user, naming the fix.
func foreignLocks(dir string) error {
	if !deniedWrite(dir) {
		return nil
	}
	return fmt.Errorf("%s belongs to another user (%s) and this user (%s) cannot write it, so no thread can be locked: remove it (rm -r %s) while no rewind uses the store (it holds only locks), or run rewind as its owner",
		dir, owner(dir), me(), dir)
}

// writable reports whether this process may write the file or directory
// (always, for root).
func writable(path string) bool {
	return syscall.Access(path, 2 /* W_OK */) == nil
}

// deniedWrite reports whether the file or directory is there and this
// process may not write it, in one call: exists then writable raced with
// another process closing the store, whose -wal vanished in between and
// read as another user's.
func deniedWrite(path string) bool {
	err := syscall.Access(path, 2 /* W_OK */)
	return err != nil && !errors.Is(err, syscall.ENOENT)
}

// readable reports whether this process may read the file (false when
// it is missing).
func readable(path string) bool {
	return syscall.Access(path, 4 /* R_OK */) == nil
}

// size is the file's size, -1 when it is missing.
func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// me names this process's user.
func me() string { return uidName(os.Geteuid()) }

// owner names a file's owner and mode.
func owner(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return err.Error()
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf("mode %04o", fi.Mode().Perm())
	}
	return fmt.Sprintf("owned by %s, mode %04o", uidName(int(st.Uid)), fi.Mode().Perm())
}

func uidName(uid int) string {
	id := strconv.Itoa(uid)
	if u, err := user.LookupId(id); err == nil {
		return u.Username + ", uid " + id
	}
	return "uid " + id
}
