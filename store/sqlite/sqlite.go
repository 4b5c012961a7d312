// Package sqlite is the embedded store.Store: one SQLite file (pure Go, no
// cgo, nothing to install) that survives kill -9, with per-thread writer
// locks that the OS releases when their process dies.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"rewind/store"
	"rewind/store/internal/check"
)

// pragmas are every connection's, with its synchronous (Sync).
// secure_delete overwrites deleted rows with zeros, so a deleted thread
// (or a pruned checkpoint) leaves no text in the file (DeleteThread
// empties the WAL too: see wipeWAL). mmap (readMmap) reads the file's
// pages where the OS keeps them.
const pragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)" +
	"&_pragma=secure_delete(1)" + readMmap

// readMmap has SQLite read the database file through a memory map (pages
// in the WAL are still read with pread). A new process's first reads
// otherwise copy every page into page-cache memory that SQLite's
// allocator maps and the kernel faults in a page at a time: reading a
// checkpoint of a 1,000-turn thread in a new process took 25% of its CPU
// time in those page-cache allocations and 13% in pread (perf), and the
// faults are dear on a VM. SQLite writes through its own writes, never
// the map. The cost: an I/O error under the map is a SIGBUS, not an
// error (the file shrinks only by SQLite, which remaps: rewind never
// VACUUMs).
const readMmap = "&_pragma=mmap_size(1073741824)"

// Sync is how a commit reaches the disk (SQLite's synchronous, in WAL
// mode).
type Sync string

const (
	// SyncFull, the default, fsyncs the WAL at every commit: a commit
	// that returned survives an OS crash or a power cut.
	SyncFull Sync = "full"
	// SyncNormal fsyncs only when the WAL is folded into the file (every
	// checkpointEvery commits): a killed process loses nothing, but an OS
	// crash or a power cut may lose the commits since the last fold.
	SyncNormal Sync = "normal"
)

// ParseSync reads a --sqlite-sync value: full or normal.
func ParseSync(v string) (Sync, error) {
	switch s := Sync(strings.ToLower(strings.TrimSpace(v))); s {
	case SyncFull, SyncNormal:
		return s, nil
	}
	return "", fmt.Errorf("sqlite sync %q: give full (every commit on disk, the default) or normal (faster; an OS crash or power cut may lose the last commits)", v)
}

// pragma is the connection parameter that sets it.
func (y Sync) pragma() string {
	if y == SyncNormal {
		return "&_pragma=synchronous(NORMAL)"
	}
	return "&_pragma=synchronous(FULL)"
}

// readerPragmas are pragmas but journal_mode: a reader reads in the
// file's mode, and opens before the file is known to be a store (check).
const readerPragmas = "_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=secure_delete(1)" + readMmap

// readOnlyPragmas are the connections' of a store this process cannot
// write (see access).
const readOnlyPragmas = "_pragma=busy_timeout(5000)&_pragma=query_only(1)" + readMmap

// Store is safe for concurrent use, and several processes may open the same file.
type Store struct {
	path  string // as given, for messages
	locks string // absolute: a later chdir must not move the locks
	// readOnly says why this process cannot write the file (see access);
	// empty when it can.
	readOnly string
	w        writer // the write pool's one connection (write.go)
	r        pool
	hook     atomic.Pointer[func(stage string)]
	// unwiped is set when a reader kept wipeWAL from emptying the WAL
	// after a delete: the next write transaction, or Close, tries again,
	// and so does the next Open or Close of any process (erase.go).
	unwiped atomic.Bool
	// watchDSN opens a watcher's own connection (Watch); done is closed
	// by Close, which ends the watchers.
	watchDSN  string
	done      chan struct{}
	closeOnce sync.Once
	// The WAL checkpointer (checkpointer): commits counts the writes'
	// commits, every checkpointEvery-th wakes it, and ckptDone is closed
	// once it has stopped. nil for a read-only store.
	commits  atomic.Int64
	ckpt     chan struct{}
	ckptDone chan struct{}
	// lockFiles are the threads' lock files Lock keeps open (lock.go).
	lockMu    sync.Mutex
	lockFiles map[string]*lockFile
	clock     func() time.Time // stamps rows (WithClock; nil: time.Now)
	sync      Sync             // WithSync; "": SyncFull
	vfs       string           // the SQLite VFS (tests: withVFS); "": the OS's
	schema    int              // WithSchema; 0: Open reads it (check): the file's at Open
	// file is the database's absolute path. lazyCommits says that a
	// commit since the last fsync of the WAL was not fsynced (see lazy);
	// syncWAL fsyncs it with fileSync (tests: WithFileSync; nil: fsync),
	// and the directory once (dirSynced, under the writer's mutex).
	file        string
	lazyCommits atomic.Bool
	fileSync    func(path string) error
	dirSynced   bool
}

// Option configures a store (Open).
type Option func(*Store)

// WithClock gives the store the clock it stamps rows with (a checkpoint
// given no CreatedAt, task writes, drafts, fences; default time.Now), so a
// test's stored times do not depend on when it ran.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.clock = now } }

// WithSync says how commits reach the disk (default SyncFull).
func WithSync(y Sync) Option { return func(s *Store) { s.sync = y } }

// WithSchema is the file's store schema version as the caller read it
// just before (a detection, which opened the file): Open reads it no
// second time on a connection of its own, whose parse of the file's
// schema was a tenth of a read command's work. 0: Open reads it.
func WithSchema(v int) Option { return func(s *Store) { s.schema = v } }

// File is the database file's absolute path.
func (s *Store) File() string { return s.file }

// Sync is how the store's commits reach the disk.
func (s *Store) Sync() Sync {
	if s.sync == "" {
		return SyncFull
	}
	return s.sync
}

// now is the store's clock in the microseconds a row keeps.
func (s *Store) now() int64 {
	if s.clock != nil {
		return s.clock().UnixMicro()
	}
	return time.Now().UnixMicro()
}

// pool is a database handle with its statements prepared once: parsing is
// about a third of the cost of a point query. Each is prepared at its
// first use: preparing all of them at Open was a tenth of a read
// command's process (perf of rewind bench --load), and a command uses a
// few.
type pool struct {
	*sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// prepare prepares queries now (Open's: what a load reads, so a file it
// cannot read is refused at Open).
func (p *pool) prepare(ctx context.Context, queries ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range queries {
		if err := p.add(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// stmt is q prepared, at its first use.
func (p *pool) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.stmts[q]; !ok {
		if err := p.add(ctx, q); err != nil {
			return nil, err
		}
	}
	return p.stmts[q], nil
}

// add prepares q into stmts (p.mu held); the statements close with the pool.
func (p *pool) add(ctx context.Context, q string) error {
	if p.stmts == nil {
		p.stmts = map[string]*sql.Stmt{}
	}
	st, err := p.PrepareContext(ctx, q)
	if err != nil {
		return err
	}
	p.stmts[q] = st
	return nil
}

// query runs q, prepared at its first use.
func (p *pool) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return queryStmt(ctx, st, args...)
}

// queryStmt runs a statement of the pool's (which closes it).
func queryStmt(ctx context.Context, st *sql.Stmt, args ...any) (*sql.Rows, error) {
	return st.QueryContext(ctx, args...)
}

// queryRow runs q for one row and scans it into dst.
func (p *pool) queryRow(ctx context.Context, q string, args []any, dst ...any) error {
	st, err := p.stmt(ctx, q)
	if err != nil {
		return err
	}
	return scanRow(ctx, st, args, dst)
}

// scanRow runs a statement of the pool's for one row.
func scanRow(ctx context.Context, st *sql.Stmt, args, dst []any) error {
	return st.QueryRowContext(ctx, args...).Scan(dst...)
}

var (
	_ store.Store  = (*Store)(nil)
	_ store.Drafts = (*Store)(nil)
)

// Open opens the store in the SQLite file at path, creating the file and its
// directory when missing. It refuses, without writing to it, a file that is
// not a SQLite database, not rewind's, or written by a newer rewind.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	if path == "" {
		return nil, errors.New("open sqlite store: no path given; name the database file, e.g. ./rewind.db")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open sqlite store %s: create its directory: %w; choose a writable location", path, err)
	}
	if err := create(path); err != nil {
		return nil, err
	}
	params, readOnly, err := access(path)
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, file: abs, locks: abs + ".locks", readOnly: readOnly, done: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	if _, err := ParseSync(string(s.Sync())); err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	if s.vfs != "" {
		params += "vfs=" + url.QueryEscape(s.vfs) + "&"
	}
	// A URI, so that '?', '#' and '%' in the path stay part of the file name.
	uri := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + params
	// The readers' pool opens first, and inspect reads the file on its
	// first connection, which then stays for the reads: a connection of
	// inspect's own parsed the file's schema once more and, the process's
	// last to close, emptied and unmapped the WAL index that the reader
	// then opened again (38% of BenchmarkOpenGet's CPU). A reader sets
	// no journal_mode, so it changes nothing in a file Open refuses; the
	// writer's connection switches a new file to WAL (migrate), and a
	// connection reads in the mode the file is in.
	conns := pragmas + s.Sync().pragma()
	s.watchDSN = uri + readerPragmas + s.Sync().pragma() + "&_pragma=query_only(1)"
	if readOnly != "" {
		// No journal_mode: a read-only connection must not try to set it.
		conns = readOnlyPragmas
		s.watchDSN = uri + readOnlyPragmas
	}
	if s.r.DB, err = sql.Open("sqlite", s.watchDSN); err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	if err := s.check(ctx); err != nil {
		s.r.Close()
		return nil, err
	}
	// BEGIN IMMEDIATE takes the write lock up front, so a transaction never
	// fails half-way because another process started writing (_txlock:
	// migrate's; the writer runs its own BEGIN IMMEDIATE).
	if s.w.DB, err = sql.Open("sqlite", uri+conns+"&_txlock=immediate"); err != nil {
		s.r.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.initial = s.Sync()
	// A store of this schema opens without a write: migrate's transaction
	// took the file's write lock for every command, one more wait (and,
	// under contention, one more SQLITE_BUSY) before any work.
	if readOnly == "" && s.schema != schemaVersion {
		if err := s.migrateWaiting(ctx); err != nil {
			s.r.Close()
			s.w.Close()
			return nil, err
		}
	}
	n := max(4, runtime.GOMAXPROCS(0))
	s.r.SetMaxOpenConns(n)
	s.r.SetMaxIdleConns(n)
	s.w.queries = []string{sqlPutCheckpointState, sqlPutWritesState, sqlNewest, sqlCheckpoint, sqlPutCheckpoint, sqlEvents, sqlSettle,
		sqlPutWrites, sqlDeleteEvents, sqlDeleteWrites, sqlDeleteThread, sqlDeleteMsgs, sqlDeleteMsgKeys, sqlDeleteMsgWords, sqlDeleteBlobs,
		sqlDeleteDrafts, sqlPutDraft, sqlDraft, sqlDeleteEpoch, sqlDeleteHead, sqlPutHead, sqlEpoch, sqlIssued, sqlNextEpoch, sqlFence,
		sqlPruneFound, sqlPruneRerooted, sqlPruneReroot, sqlRebase, sqlPruneWrites, sqlPruneEvents, sqlPruneCheckpoints,
		sqlPruneBlobs, sqlPutThread, sqlPruneThread, sqlDeleteThreadRow, sqlDeleteThreadTenant, sqlThreadTenant, sqlAddTenant, sqlClaimThread, sqlHasBlob, sqlDeleteSize}
	// The writer's connection and its statements are taken at the first
	// write (begin): preparing them cost a command that only reads a
	// tenth of its process. Of the reader's, Open prepares what loading a
	// checkpoint reads (a load after Open pays no parsing), on a file that
	// was a store already: a new one has no checkpoint to load, and its
	// reader's connection (a parse of the whole schema, 15% of
	// BenchmarkOpenNewFile's CPU) waits for a first read. The others are
	// prepared at their first use. A command loads through a tenant's
	// handle (store.ForTenant), whose chain is read with its owner
	// (ChainOwned): sqlChainRangeOwned, not sqlChainRange.
	if s.schema != 0 {
		if err := s.r.prepare(ctx, sqlLatest, sqlGet, sqlChainRangeOwned, sqlHeadDoc, sqlBodiesNear); err != nil {
			s.Close()
			return nil, fmt.Errorf("open sqlite store %s: prepare statements: %w%s", path, full(path, err), hint(err))
		}
	}
	if readOnly == "" {
		if err := s.startCheckpointer(uri + conns); err != nil {
			s.Close()
			return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
		}
	}
	// A delete another process made while a reader held the WAL left the
	// wipe to the next open (erase.go).
	s.w.mu.Lock()
	s.retryWipe(ctx)
	s.w.mu.Unlock()
	return s, nil
}

// check reads the file's store schema version into s.schema (unless
// WithSchema gave it) and refuses what this process cannot open: a newer
// schema, or, read-only, a file that is no store of this schema yet.
func (s *Store) check(ctx context.Context) error {
	var err error
	if s.schema > 0 {
		err = checkVersion(s.path, s.schema)
	} else {
		s.schema, err = inspect(ctx, s.path, s.r.DB)
	}
	if err != nil || s.readOnly == "" {
		return err
	}
	switch {
	case s.schema == 0:
		return fmt.Errorf("open sqlite store %s: it is not a rewind store yet, and %s", s.path, s.readOnly)
	case s.schema < schemaVersion:
		return fmt.Errorf("open sqlite store %s: it was written by an older rewind (store schema %d, this binary writes %d) and needs an upgrade, but %s", s.path, s.schema, schemaVersion, s.readOnly)
	}
	return nil
}

func code(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// full names a full disk as the cause of err, a SQLite error on the
// database at path (check.DiskFull), else returns err.
func full(path string, err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	return check.DiskFull(path, se.Code(), err)
}

// hint tells what to do about the SQLite errors a user can fix.
func hint(err error) string {
	if errors.Is(err, sql.ErrConnDone) {
		return "; the store's connection to its file broke, try again"
	}
	switch code(err) {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return "; another process is holding the database, try again"
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_AUTH:
		return "; check that the file and its directory are writable"
	case sqlite3.SQLITE_TOOBIG:
		return "; a document or id is beyond SQLite's size limit (1 GB): make it smaller"
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return "; the file is damaged, restore it from a backup"
	}
	return ""
}

// wrap says which store and call failed; a cancelled context shows as
// such even when SQLite only reports an interrupt.
func (s *Store) wrap(ctx context.Context, err *error, format string, args ...any) {
	if *err == nil {
		return
	}
	if c := ctx.Err(); c != nil && !errors.Is(*err, c) {
		*err = fmt.Errorf("%w: %w", c, *err)
	}
	if code(*err) == sqlite3.SQLITE_TOOBIG { // input SQLite cannot hold is refused input
		*err = fmt.Errorf("%w: %w", store.ErrInvalid, *err)
	}
	*err = fmt.Errorf("sqlite store %s: %s: %w%s", s.path, fmt.Sprintf(format, args...), full(s.path, *err), hint(*err))
}

func micros(t int64) time.Time { return time.UnixMicro(t).UTC() }

func nullID(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }

func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.done != nil {
			close(s.done)
		}
	})
	if s.ckptDone != nil {
		<-s.ckptDone // its checkpoint ends before the file is let go
	}
	errs := []error{s.syncWAL()} // the lazy commits of a run not released
	if s.w.DB != nil {
		s.w.mu.Lock() // after the write in progress, if any
		s.retryWipe(context.Background())
		s.w.release(false)
		s.w.closed = true
		s.w.mu.Unlock()
	}
	errs = append(errs, s.closeLocks())
	for _, db := range []*sql.DB{s.r.DB, s.w.DB} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close sqlite store %s: %w", s.path, err)
	}
	return nil
}
