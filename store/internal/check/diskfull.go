package check

import (
	"fmt"
	"path/filepath"
	"syscall"

	"rewind/store"
)

// fullBelow is the free space under which a disk that failed a write is
// taken to be full: SQLite reports a disk that cannot grow the WAL's
// index as an I/O error (SQLITE_IOERR_SHMSIZE, "disk I/O error (4874)"),
// not as SQLITE_FULL.
const fullBelow = 1 << 20

// SQLite codes, so that this package needs no driver.
const (
	sqliteIOErr = 10
	sqliteFull  = 13
)

// DiskFull names the cause of a SQLite error of extended code code on the
// database at path when it is a full disk: SQLITE_FULL, or an I/O error
// while the disk holding path has (next to) no space left. It returns err
// itself otherwise.
func DiskFull(path string, code int, err error) error {
	dir := filepath.Dir(path)
	var fs syscall.Statfs_t
	statErr := syscall.Statfs(dir, &fs)
	free := uint64(fs.Bavail) * uint64(fs.Bsize)
	switch {
	case err == nil:
		return nil
	case code&0xff == sqliteFull:
	case code&0xff == sqliteIOErr && statErr == nil && free < fullBelow:
	default:
		return err
	}
	return &fullDisk{err: err, dir: dir, free: free, known: statErr == nil}
}

// fullDisk is a write refused for want of space: it matches
// store.ErrDiskFull and the error it explains.
type fullDisk struct {
	err   error
	dir   string
	free  uint64
	known bool
}

func (e *fullDisk) Error() string {
	free := ""
	if e.known {
		free = fmt.Sprintf(" (%s free)", bytesText(e.free))
	}
	return fmt.Sprintf("%v; the disk holding %s is full%s: free space on it", e.err, e.dir, free)
}

func (e *fullDisk) Unwrap() []error { return []error{e.err, store.ErrDiskFull} }

func bytesText(n uint64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
