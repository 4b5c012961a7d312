package sqlite_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"rewind/store"
	"rewind/store/sqlite"
)

// A power cut, simulated: the VFS "rewind-powercut" is SQLite's own (the
// OS's files) with its writes, truncations and syncs watched. Each file
// has a disk image, what its last fsync made durable, and the writes that
// have reached the OS since (its page cache). A power cut keeps the disk
// images, and of the writes not yet synced none, or any of them: the
// worst an OS crash or a power cut can leave. The cut is taken just before
// every fsync, when a commit's rows have reached the OS but not the disk,
// and once more after the last commit returned.

// powerDisk is what the watched files hold on the simulated disk.
type powerDisk struct {
	mu    sync.Mutex
	files map[string]*diskFile  // by path
	open  map[uintptr]*openFile // by the sqlite3_file SQLite opened
	// wrapped are the io methods given to files (in powerIOs), by the OS
	// VFS's methods they wrap (the database's, and a journal's or WAL's
	// without locks).
	wrapped map[uintptr]*sqlite3.Tsqlite3_io_methods
	// cuts, by directory: the one of the file's directory, when set, is
	// called before its fsync (mu not held). By directory, so that the
	// tests taking cuts run at once, each in its own.
	cuts map[string]func()
}

type diskFile struct {
	disk    []byte    // what survives a power cut
	pending []diskOp  // reached the OS, not yet synced
	os      []byte    // what the OS holds: disk with pending applied
	gone    bool      // deleted
	syncs   int       // fsyncs that made it durable
	_       [0]func() // not comparable
}

// diskOp is a write (data at off) or, with data nil, a truncation to off.
type diskOp struct {
	off  int64
	data []byte
}

func (op diskOp) apply(b []byte) []byte {
	if op.data == nil {
		if int64(len(b)) > op.off {
			return b[:op.off]
		}
		return append(b, make([]byte, op.off-int64(len(b)))...)
	}
	if end := op.off + int64(len(op.data)); int64(len(b)) < end {
		b = append(b, make([]byte, end-int64(len(b)))...)
	}
	copy(b[op.off:], op.data)
	return b
}

var (
	powerOnce sync.Once
	power     = &powerDisk{files: map[string]*diskFile{}, open: map[uintptr]*openFile{}, wrapped: map[uintptr]*sqlite3.Tsqlite3_io_methods{}, cuts: map[string]func(){}}
	// The VFS and the io methods it gives files: SQLite keeps pointers to
	// them, so they live for the process, outside the Go heap.
	powerVFS sqlite3.Tsqlite3_vfs
	powerIOs [4]sqlite3.Tsqlite3_io_methods
	osVFS    *sqlite3.Tsqlite3_vfs
)

// openFile is a file SQLite opened through the VFS: its disk image, the
// io methods the OS's VFS gave it and its directory.
type openFile struct {
	*diskFile
	methods *sqlite3.Tsqlite3_io_methods
	dir     string
}

// powerCutVFS registers the VFS once and returns its name.
func powerCutVFS(t *testing.T) string {
	const name = "rewind-powercut"
	powerOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		osVFS = (*sqlite3.Tsqlite3_vfs)(ptr(sqlite3.Xsqlite3_vfs_find(tls, 0)))
		if osVFS == nil {
			panic("no default SQLite VFS")
		}
		powerVFS = *osVFS
		z, err := libc.CString(name)
		if err != nil {
			panic(err)
		}
		powerVFS.FzName, powerVFS.FpNext = z, 0
		*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&powerVFS.FxOpen)) = powerOpen
		*(*func(*libc.TLS, uintptr, uintptr, int32) int32)(unsafe.Pointer(&powerVFS.FxDelete)) = powerDelete
		if rc := sqlite3.Xsqlite3_vfs_register(tls, uintptr(unsafe.Pointer(&powerVFS)), 0); rc != sqlite3.SQLITE_OK {
			panic(fmt.Sprintf("register the VFS: %d", rc))
		}
	})
	return name
}

// ptr is the pointer SQLite handed over as a uintptr (its memory is
// libc's, never moved by Go).
func ptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }

func powerOpen(tls *libc.TLS, pVfs, zName, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	rc := (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&osVFS.FxOpen)))(tls, pVfs, zName, pFile, flags, pOutFlags)
	methods := &(*sqlite3.Tsqlite3_file)(ptr(pFile)).FpMethods
	if rc != sqlite3.SQLITE_OK || *methods == 0 || zName == 0 {
		return rc
	}
	power.mu.Lock()
	defer power.mu.Unlock()
	orig := *methods
	io := power.wrapped[orig]
	if io == nil {
		if len(power.wrapped) == len(powerIOs) {
			panic("the OS's VFS gave files more kinds of io methods than the test keeps")
		}
		// Not on the Go heap: SQLite's pointer arithmetic on a heap object
		// fails -race's checkptr.
		io = &powerIOs[len(power.wrapped)]
		*io = *(*sqlite3.Tsqlite3_io_methods)(ptr(orig))
		*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&io.FxWrite)) = powerWrite
		*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&io.FxTruncate)) = powerTruncate
		*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&io.FxSync)) = powerSync
		*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&io.FxClose)) = powerClose
		power.wrapped[orig] = io
	}
	path := libc.GoString(zName)
	f := power.files[path]
	if f == nil || f.gone {
		// A file that was there before is on the disk already.
		b, _ := os.ReadFile(path)
		f = &diskFile{disk: b, os: slices.Clone(b)}
		power.files[path] = f
	}
	power.open[pFile] = &openFile{f, (*sqlite3.Tsqlite3_io_methods)(ptr(orig)), filepath.Dir(path)}
	*methods = uintptr(unsafe.Pointer(io))
	return rc
}

func (io *diskFile) record(op diskOp) {
	io.pending = append(io.pending, op)
	io.os = op.apply(io.os)
}

// opened is the file SQLite opened as pFile.
func opened(pFile uintptr) *openFile {
	power.mu.Lock()
	defer power.mu.Unlock()
	return power.open[pFile]
}

func powerWrite(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	f := opened(pFile)
	rc := (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&f.methods.FxWrite)))(tls, pFile, zBuf, iAmt, iOfst)
	if rc == sqlite3.SQLITE_OK {
		data := slices.Clone(unsafe.Slice((*byte)(ptr(zBuf)), iAmt))
		power.mu.Lock()
		f.record(diskOp{off: iOfst, data: data})
		power.mu.Unlock()
	}
	return rc
}

func powerTruncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	f := opened(pFile)
	rc := (*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&f.methods.FxTruncate)))(tls, pFile, size)
	if rc == sqlite3.SQLITE_OK {
		power.mu.Lock()
		f.record(diskOp{off: size})
		power.mu.Unlock()
	}
	return rc
}

func powerSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	f := opened(pFile)
	power.mu.Lock()
	cut := power.cuts[f.dir]
	power.mu.Unlock()
	if cut != nil {
		cut() // the power fails between the write and its fsync
	}
	rc := (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&f.methods.FxSync)))(tls, pFile, flags)
	if rc == sqlite3.SQLITE_OK {
		power.mu.Lock()
		f.disk, f.pending = slices.Clone(f.os), nil
		f.syncs++
		power.mu.Unlock()
	}
	return rc
}

func powerClose(tls *libc.TLS, pFile uintptr) int32 {
	f := opened(pFile)
	power.mu.Lock()
	delete(power.open, pFile)
	power.mu.Unlock()
	return (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&f.methods.FxClose)))(tls, pFile)
}

// powerDelete deletes the file; the delete is taken as durable at once
// (SQLite deletes only a WAL it folded whole, or a journal it is done with).
func powerDelete(tls *libc.TLS, pVfs, zPath uintptr, dirSync int32) int32 {
	rc := (*(*func(*libc.TLS, uintptr, uintptr, int32) int32)(unsafe.Pointer(&osVFS.FxDelete)))(tls, pVfs, zPath, dirSync)
	if rc == sqlite3.SQLITE_OK {
		power.mu.Lock()
		if f := power.files[libc.GoString(zPath)]; f != nil {
			f.gone = true
		}
		power.mu.Unlock()
	}
	return rc
}

// image is what the watched files under dir hold after a power cut:
// their disk images, each with the unsynced writes keep picks (in order).
func (p *powerDisk) image(dir string, keep func(diskOp) bool) map[string][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string][]byte{}
	for path, f := range p.files {
		if f.gone || filepath.Dir(path) != dir {
			continue
		}
		b := slices.Clone(f.disk)
		for _, op := range f.pending {
			if keep(op) {
				b = op.apply(b)
			}
		}
		out[filepath.Base(path)] = b
	}
	return out
}

// synced is an fsync of path outside SQLite.
func (p *powerDisk) synced(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := p.files[path]; f != nil && !f.gone {
		f.disk, f.pending = slices.Clone(f.os), nil
		f.syncs++
	}
}

// syncs counts the fsyncs of dir's watched files.
func (p *powerDisk) syncs(dir string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for path, f := range p.files {
		if filepath.Dir(path) == dir {
			n += f.syncs
		}
	}
	return n
}

// powerCut is one simulated cut: the files and how many writes had
// returned (reported committed) when it came.
type powerCut struct {
	files     map[string][]byte
	committed int
	how       string
}

// doneWrite is a write that returned: a checkpoint (its state) or a
// task's writes.
type doneWrite struct {
	checkpoint int64
	state      string
	task       string
}

// powerWorkload writes a thread through a store opened on the VFS with
// the given sync, taking a power cut before every fsync and after the
// last write, and returns the cuts and the writes in the order they
// returned.
func powerWorkload(t *testing.T, mode sqlite.Sync, checkpoints int) (cuts []powerCut, done []doneWrite, reports, fsyncs int) {
	t.Helper()
	ctx := t.Context()
	vfs := powerCutVFS(t)
	dir := memDir(t)
	var take func()
	// The fsync of a run's commits when its lock is released (see
	// sqlite.lazy) is the OS's, outside SQLite: the disk images follow it.
	fileSync := func(path string) error {
		take()
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.Sync(); err != nil {
			return err
		}
		power.synced(path)
		return nil
	}
	s, err := sqlite.Open(ctx, filepath.Join(dir, "rewind.db"), sqlite.WithVFS(vfs), sqlite.WithSync(mode), sqlite.WithFileSync(fileSync))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var committed atomic.Int64
	// The cuts the hook takes: the store's checkpointer goroutine fsyncs
	// too, so it appends to taken (under cutsMu) while this one writes.
	var cutsMu sync.Mutex
	var taken []powerCut
	rng := rand.New(rand.NewPCG(31, 1))
	take = func() {
		done := int(committed.Load())
		none := power.image(dir, func(diskOp) bool { return false })
		cutsMu.Lock()
		defer cutsMu.Unlock()
		some := power.image(dir, func(diskOp) bool { return rng.IntN(2) == 0 })
		taken = append(taken, powerCut{none, done, "no unsynced write"}, powerCut{some, done, "some unsynced writes"})
	}
	power.mu.Lock()
	power.cuts[dir] = take
	power.mu.Unlock()
	defer func() {
		power.mu.Lock()
		delete(power.cuts, dir)
		power.mu.Unlock()
	}()
	// Runs of 8 checkpoints, as a turn's, under the thread's lock: what a
	// run writes is reported done once its lock is released. Every fifth
	// run writes without the lock (a take-over): each write is reported
	// done when it returns.
	var release func() error
	for i := 1; i <= checkpoints; i++ {
		run := (i - 1) / 8
		locked := run%5 != 4
		if locked && release == nil {
			if release, err = s.Lock(ctx, "t"); err != nil {
				t.Fatal(err)
			}
		}
		c := store.Checkpoint{ThreadID: "t", ID: int64(i), ParentID: int64(i - 1), Base: true,
			State:    fmt.Appendf(nil, `{"step":%d,"text":%q}`, i, strings.Repeat(fmt.Sprint(i), 200)),
			Messages: []store.Message{message(int64(i))}}
		if err := s.PutCheckpoint(ctx, c, []store.Event{{Seq: 1, Type: "step", Payload: []byte(`{}`)}}); err != nil {
			t.Fatal(err)
		}
		done = append(done, doneWrite{checkpoint: c.ID, state: string(c.State)})
		if i%3 == 0 {
			w := store.TaskWrites{ThreadID: "t", CheckpointID: int64(i), TaskID: fmt.Sprintf("task-%d", i), Writes: []byte(`[{"channel":"x","value":1}]`)}
			if err := s.PutWrites(ctx, w); err != nil {
				t.Fatal(err)
			}
			done = append(done, doneWrite{checkpoint: w.CheckpointID, task: w.TaskID})
		}
		if release != nil && (i%8 == 0 || i == checkpoints) {
			if err := release(); err != nil {
				t.Fatal(err)
			}
			release = nil
		}
		if release == nil && int(committed.Load()) < len(done) {
			committed.Store(int64(len(done)))
			reports++
		}
	}
	take() // the power fails now, every write returned
	cutsMu.Lock()
	cuts = slices.Clone(taken)
	cutsMu.Unlock()
	fsyncs = power.syncs(dir)
	t.Logf("sync %s: %d writes reported done at %d points, %d fsyncs, %d cuts", mode, len(done), reports, fsyncs, len(cuts))
	return cuts, done, reports, fsyncs
}

// memDir is a new directory in memory (/dev/shm) when there is one:
// the VFS simulates the disk, and the OS's fsyncs, each of them a wait on
// a real disk, would only make the test slow.
func memDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/dev/shm", "rewind-powercut-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// message is a message row of the workload.
func message(i int64) store.Message {
	body := fmt.Appendf(nil, `{"i":%d}`, i)
	return store.Message{Hash: store.ContentHash(body), Index: i, Body: body}
}

// lost opens each cut's files as a store and says what a write reported
// committed is missing from, at the first cut that lost one.
func lost(t *testing.T, cuts []powerCut, done []doneWrite) error {
	t.Helper()
	ctx := t.Context()
	for i, c := range cuts {
		dir := memDir(t)
		for name, b := range c.files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		at := fmt.Sprintf("cut %d of %d (%s, after %d writes returned)", i, len(cuts), c.how, c.committed)
		st, err := sqlite.Open(ctx, filepath.Join(dir, "rewind.db"))
		if err != nil {
			return fmt.Errorf("%s: open: %w", at, err)
		}
		listed, err := st.History(ctx, "t", 0, 0)
		if err != nil {
			st.Close()
			return fmt.Errorf("%s: %w", at, err)
		}
		writes, err := st.Writes(ctx, "t", 0)
		st.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		states, tasks := map[int64]string{}, map[string]bool{}
		for _, cp := range listed {
			states[cp.ID] = string(cp.State)
		}
		for _, w := range writes {
			tasks[w.TaskID] = true
		}
		var missing []string
		for _, d := range done[:c.committed] {
			switch {
			case d.task != "" && !tasks[d.task]:
				missing = append(missing, fmt.Sprintf("the writes of %s at @%d", d.task, d.checkpoint))
			case d.task == "" && states[d.checkpoint] != d.state:
				missing = append(missing, fmt.Sprintf("checkpoint @%d", d.checkpoint))
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%s: %d lost, first %s", at, len(missing), missing[0])
		}
	}
	return nil
}

// TestCommittedSurvivesAPowerCut: every write a store reported done is
// found after a power cut, taken between a write and its fsync and after
// the last commit. With SyncNormal (what rewind ran before), the commits
// since the last WAL fold are lost: the test sees that too, so it can
// fail.
func TestCommittedSurvivesAPowerCut(t *testing.T) {
	t.Parallel()
	cuts, done, reports, fsyncs := powerWorkload(t, sqlite.SyncFull, 100)
	if err := lost(t, cuts, done); err != nil {
		t.Fatal(err)
	}
	if len(cuts) < 2*reports {
		t.Fatalf("%d power cuts for %d points where writes were reported done: the VFS saw fewer fsyncs", len(cuts), reports)
	}
	// A run's commits share the fsync at its release: not one a commit.
	if fsyncs > 2*reports {
		t.Errorf("%d fsyncs for %d writes reported done at %d points: a run's commits are fsynced one by one", fsyncs, len(done), reports)
	}
}

func TestSyncNormalLosesCommitsInAPowerCut(t *testing.T) {
	t.Parallel()
	cuts, done, _, _ := powerWorkload(t, sqlite.SyncNormal, 100)
	err := lost(t, cuts, done)
	if err == nil {
		t.Fatal("with synchronous=NORMAL no commit was lost in any power cut: the simulation does not drop unsynced writes")
	}
	t.Logf("as expected: %v", err)
}
