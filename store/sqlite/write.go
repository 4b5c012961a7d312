package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"rewind/store"
	"rewind/store/internal/check"
)

// Writes: the write connection and its transactions, PutCheckpoint and
// PutWrites, the fencing epochs they check, and the mid-transaction hook.

// writer is the write pool's one connection, held for the store's life:
// its statements are prepared on it once, and a write transaction is
// BEGIN IMMEDIATE … COMMIT run on it, one writer of this process at a
// time (mu; BEGIN IMMEDIATE, under busy_timeout, orders those of other
// processes). A database/sql Tx cost every write a context and a
// goroutine watching it (and one more for each query's rows, and the
// driver's for BEGIN and COMMIT), a fresh binding of each statement it
// ran (Tx.StmtContext) and their closing at COMMIT: a fifth of
// BenchmarkTurn's CPU.
type writer struct {
	*sql.DB // one connection: SQLite has one writer at a time anyway
	// queries are the statements prepared on every connection it takes.
	queries []string
	// connected, for tests, runs once take has a connection, before it
	// prepares the statements.
	connected func()
	mu        sync.Mutex
	// Held with mu:
	// conn is the connection, nil until a write takes it (again, after
	// release let go of one found broken: database/sql opens a new one).
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
	// rows are the multi-row INSERTs, prepared on first use:
	// rows[kind][n-1] inserts n rows (see insertRows).
	rows   [3][maxRows]*sql.Stmt
	closed bool
	tx     wtx // the transaction in progress
	// level is the connection's synchronous now; initial, the store's,
	// is what a new connection starts with (see lazy).
	level, initial Sync
}

// The transaction's own statements.
const (
	sqlBegin    = `BEGIN IMMEDIATE`
	sqlCommit   = `COMMIT`
	sqlRollback = `ROLLBACK`
)

var errClosed = errors.New("the store is closed")

// take makes sure the writer holds its connection, its statements
// prepared; w.mu is held.
func (w *writer) take(ctx context.Context) error {
	if w.closed {
		return errClosed
	}
	if w.conn != nil {
		return nil
	}
	conn, err := w.Conn(ctx)
	if err != nil {
		return err
	}
	w.conn, w.stmts, w.level = conn, make(map[string]*sql.Stmt, len(w.queries)+3), w.initial
	if w.connected != nil {
		w.connected()
	}
	// Prepared under the connection's busy_timeout: preparing reads the
	// schema, and the search table's constructor its own rows, so it
	// waits out another process recovering the WAL after a crash
	// (SQLITE_BUSY_RECOVERY), as a read does.
	for _, q := range append([]string{sqlBegin, sqlCommit, sqlRollback}, w.queries...) {
		st, err := conn.PrepareContext(ctx, q)
		if err != nil {
			w.release(false)
			return fmt.Errorf("prepare statements: %w", err)
		}
		w.stmts[q] = st
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA busy_timeout = 0`); err != nil { // see begin
		w.release(true)
		return err
	}
	return nil
}

// release lets go of the connection (w.mu held): back to the pool, or,
// when broken, closed (database/sql then opens a new one for take).
func (w *writer) release(broken bool) {
	if w.conn == nil {
		return
	}
	for _, st := range w.stmts {
		st.Close()
	}
	for k := range w.rows {
		for n, st := range w.rows[k] {
			if st != nil {
				st.Close()
				w.rows[k][n] = nil
			}
		}
	}
	if broken {
		// driver.ErrBadConn from Raw has database/sql close the driver's
		// connection instead of pooling it; SQLite rolls back what it held.
		_ = w.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	_ = w.conn.Close()
	w.conn, w.stmts = nil, nil
}

// ready prepares q's statements for n rows, before the transaction
// that runs them (w.mu held).
func (w *writer) ready(ctx context.Context, q rowsInsert, n int) error {
	for from := 0; from < n; from += maxRows {
		count := min(n-from, maxRows)
		if w.rows[q.kind][count-1] != nil {
			continue
		}
		st, err := w.conn.PrepareContext(ctx, q.query(count))
		if err != nil {
			return err
		}
		w.rows[q.kind][count-1] = st
	}
	return nil
}

// wtx is a write transaction on the writer's connection (see begin).
type wtx struct {
	s    *Store
	ctx  context.Context // the write's: a write it ended commits nothing
	open bool            // after BEGIN, until COMMIT or ROLLBACK
	lazy bool            // its COMMIT is not fsynced (see lazy)
}

// in is one of the writer's statements, to run inside tx.
func (tx *wtx) in(query string) *sql.Stmt { return tx.s.w.stmts[query] }

// begin starts a write transaction (BEGIN IMMEDIATE), or says why this
// process cannot write the store. It runs ready first, if given, with
// the writer's connection held. The caller defers tx.end.
func (s *Store) begin(ctx context.Context, ready ...func() error) (*wtx, error) {
	return s.beginAs(ctx, false, ready...)
}

// lazy says whether a write of thread may commit without its own fsync:
// with SyncFull, while this Store holds the thread's lock (Lock: a run
// of the engine, its puts one after the other). Such commits reach the
// disk when the lock is released (syncWAL), before the run reports
// anything, or with the next commit that is fsynced: the WAL is one
// file, written in order, and a power cut keeps a prefix of its commits.
// A power cut mid-run may lose the run's last steps, as a kill a moment
// earlier would; never a commit of a run that ended, nor any other
// write (a fence, a draft, a delete, a write without the lock).
func (s *Store) lazy(thread string) bool {
	if s.Sync() != SyncFull {
		return false
	}
	s.lockMu.Lock()
	defer s.lockMu.Unlock()
	l := s.lockFiles[thread]
	return l != nil && l.held
}

// beginAs is begin with the transaction's COMMIT fsynced or, lazy, not.
func (s *Store) beginAs(ctx context.Context, lazy bool, ready ...func() error) (*wtx, error) {
	if s.readOnly != "" {
		return nil, errors.New(s.readOnly)
	}
	w := &s.w
	w.mu.Lock()
	err := w.take(ctx)
	for _, r := range ready {
		if err == nil {
			err = r()
		}
	}
	if err == nil {
		level := s.Sync()
		if lazy {
			level = SyncNormal
		}
		err = w.setLevel(ctx, level)
	}
	if err == nil && s.unwiped.Load() {
		s.wipeWAL(ctx)
	}
	if err == nil {
		err = w.begin(ctx)
		if broken(err) {
			// As database/sql would: once more on a new connection.
			w.release(true)
			if err = w.take(ctx); err == nil {
				err = w.begin(ctx)
			}
		}
	}
	if err != nil {
		if broken(err) {
			w.release(true)
		}
		w.mu.Unlock()
		return nil, err
	}
	w.tx = wtx{s: s, ctx: ctx, open: true, lazy: lazy}
	return &w.tx, nil
}

// setLevel sets the connection's synchronous for the next transaction
// (w.mu held, outside a transaction).
func (w *writer) setLevel(ctx context.Context, level Sync) error {
	if w.level == level {
		return nil
	}
	if _, err := w.conn.ExecContext(quiet(ctx), `PRAGMA synchronous = `+strings.ToUpper(string(level))); err != nil {
		return err
	}
	w.level = level
	return nil
}

// syncWAL makes the lazy commits durable: an fsync of the WAL, which
// holds every commit not yet folded into the file (a fold fsyncs the
// WAL before it writes the file, and the file before the WAL starts
// over), and once a Store, of its directory, which holds the WAL's name.
// It runs under the writer's mutex: a commit after it is lazy again.
func (s *Store) syncWAL() error {
	if !s.lazyCommits.Load() {
		return nil
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	if !s.lazyCommits.Load() {
		return nil
	}
	sync := s.fileSync
	if sync == nil {
		sync = fsync
	}
	if err := sync(s.file + "-wal"); err != nil {
		return fmt.Errorf("sqlite store %s: fsync its WAL: %w (%w); check the disk, then resume: the next write retries it", s.path, err, store.ErrNotDurable)
	}
	if !s.dirSynced {
		if err := sync(filepath.Dir(s.file)); err != nil {
			return fmt.Errorf("sqlite store %s: fsync its directory: %w (%w); check the disk, then resume: the next write retries it", s.path, err, store.ErrNotDurable)
		}
		s.dirSynced = true
	}
	s.lazyCommits.Store(false)
	return nil
}

// fsync flushes the file or directory at path to the disk: any of its
// descriptors does, SQLite's included. A missing file holds nothing.
func fsync(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// busyTimeout is a round of a write's wait for another process's write
// lock (as pragmas set it): the writer's connection waits only in begin,
// and there in rounds until busyWait.
const busyTimeout = "5000"

// busyWait is how long, in all, a write waits for other processes' write
// transactions before it fails: their turns, deletes and prunes, and a
// process the scheduler left holding the lock. One busy_timeout alone
// (5 s) let two processes hammering one file fail commands with
// SQLITE_BUSY.
const busyWait = time.Minute

// begin runs BEGIN IMMEDIATE (w.mu held). The connection does not wait
// for a lock (busy_timeout 0, see take), so the first try needs no
// watch on ctx: the driver starts a goroutine to watch a cancellable
// context for a statement, a tenth of a put's CPU. Only once another
// process holds the write lock does BEGIN wait for it, under
// busy_timeout, watching ctx, and again after each round until busyWait:
// the wait ends once ctx is done.
func (w *writer) begin(ctx context.Context) error {
	_, err := w.stmts[sqlBegin].ExecContext(quiet(ctx))
	if err == nil || code(err) != sqlite3.SQLITE_BUSY {
		return err
	}
	if _, err := w.conn.ExecContext(ctx, `PRAGMA busy_timeout = `+busyTimeout); err != nil {
		return err
	}
	for deadline := time.Now().Add(busyWait); ; {
		_, err = w.stmts[sqlBegin].ExecContext(ctx)
		if code(err) != sqlite3.SQLITE_BUSY || ctx.Err() != nil || time.Now().After(deadline) {
			break
		}
	}
	if _, off := w.conn.ExecContext(quiet(ctx), `PRAGMA busy_timeout = 0`); off != nil && err == nil {
		// A connection that would wait, inside a transaction: it goes
		// (SQLite rolls back), and the next write starts on a new one.
		w.release(true)
		return off
	}
	return err
}

// broken says that an error of BEGIN leaves the connection unusable: it
// is gone, or in a state BEGIN cannot start from. A busy store, a done
// context and SQLite's refusals leave it as it was.
func broken(err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, sql.ErrConnDone), errors.Is(err, driver.ErrBadConn):
		return true
	}
	switch code(err) {
	case 0, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_INTERRUPT:
		return false
	}
	return true
}

// commit ends a write with COMMIT, unless its context is done (see
// quiet), and counts it towards the next WAL checkpoint. A COMMIT that
// failed leaves the rollback to end.
func (tx *wtx) commit() error {
	if err := tx.ctx.Err(); err != nil {
		return err
	}
	if _, err := tx.in(sqlCommit).ExecContext(context.Background()); err != nil {
		return err
	}
	tx.open = false
	if tx.lazy {
		tx.s.lazyCommits.Store(true)
	} else if tx.s.w.level == SyncFull {
		// Its fsync made every commit before it durable too.
		tx.s.lazyCommits.Store(false)
	}
	tx.s.committed()
	return nil
}

// end rolls back a transaction commit did not end, and lets the next
// writer in. A ROLLBACK that fails (the connection is broken, or SQLite
// rolled back already) costs the connection: the next write starts on a
// new one, never inside a transaction left open.
func (tx *wtx) end() {
	w := &tx.s.w
	if tx.open {
		tx.open = false
		if _, err := tx.in(sqlRollback).ExecContext(context.Background()); err != nil {
			w.release(true)
		}
	}
	w.mu.Unlock()
}

// quiet gives the statements of a write transaction ctx without its
// cancel: the driver starts a goroutine to watch a cancellable context
// for every statement, a tenth of a put's CPU. The transaction keeps ctx
// (commit checks it before COMMIT), so a cancelled write still commits
// nothing.
func quiet(ctx context.Context) context.Context {
	return context.WithoutCancel(ctx)
}

// briefly is ctx for a read that ends within a millisecond or two (a
// checkpoint, its chain from the base before it, the bodies it names, a
// thread's size or owner), without its cancel: for a cancellable context
// the driver starts a goroutine to watch it for every statement and
// database/sql another for the rows, a sixth of a new process's first
// load (quiet, as writes do). A ctx done already still refuses the read;
// one done during it lets it end. Listings, ranges and scans of a whole
// thread keep ctx, so a person can stop them.
func briefly(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return quiet(ctx), nil
}

func (s *Store) PutCheckpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) (err error) {
	defer s.wrap(ctx, &err, "put checkpoint %d of thread %v", cp.ID, check.Name(cp.ThreadID))
	if events, err = check.Put(cp, events); err != nil {
		return err
	}
	tx, err := s.beginAs(ctx, s.lazy(cp.ThreadID), func() error {
		ready := []error{s.w.ready(ctx, putEvents, len(events)), s.w.ready(ctx, putMessages, len(cp.Messages))}
		for n := 1; n <= len(cp.Blobs); n++ { // newBlobs may leave out any
			ready = append(ready, s.w.ready(ctx, putBlobs, n))
		}
		return errors.Join(ready...)
	})
	if err != nil {
		return err
	}
	defer tx.end()
	ctx = quiet(ctx)
	// One statement reads all that the put decides by (the transaction
	// holds the write lock: nothing changes between the decisions).
	var newest sql.NullInt64
	var ep epochs
	var parentOK, settle bool
	if err := tx.in(sqlPutCheckpointState).QueryRowContext(ctx, cp.ThreadID, cp.ParentID, cp.Settles).Scan(&newest, &ep.current, &ep.issued, &parentOK, &settle); err != nil {
		return err
	}
	var found, same bool
	if newest.Valid && cp.ID <= newest.Int64 {
		if found, same, err = s.compare(ctx, tx, cp, events); err != nil || same {
			return err
		}
	}
	if err := ep.fenced(cp.ThreadID, cp.Epoch); err != nil {
		return err
	}
	switch {
	case found:
		return store.ErrConflict
	case newest.Valid && cp.ID < newest.Int64:
		return fmt.Errorf("the newest is %d: %w", newest.Int64, store.ErrStale)
	case cp.ParentID != 0 && !parentOK:
		return fmt.Errorf("parent checkpoint %d: %w", cp.ParentID, store.ErrNotFound)
	}
	refs, err := blobRefs(cp.BlobRefs)
	if err != nil {
		return err
	}
	now := s.now()
	if !cp.CreatedAt.IsZero() {
		now = cp.CreatedAt.UnixMicro() // the writer's (to the microsecond)
	}
	meta := nullText(cp.Meta)
	if _, err := tx.in(sqlPutCheckpoint).ExecContext(ctx, cp.ThreadID, cp.ID, nullID(cp.ParentID), cp.Base, now,
		meta, refs, string(cp.State)); err != nil {
		return err
	}
	if _, err := tx.in(sqlPutThread).ExecContext(ctx, cp.ThreadID, cp.ID, now, nullID(cp.ParentID), cp.Base, meta, refs, listedState(meta, cp.State)); err != nil {
		return err
	}
	if len(cp.Head) > 0 {
		if _, err := tx.in(sqlPutHead).ExecContext(ctx, cp.ThreadID, cp.ID, string(cp.Head)); err != nil {
			return err
		}
	}
	put := []any{cp.ThreadID, cp.ID, now}
	if err := s.insertRows(ctx, tx, putEvents, put, len(events), func(args []any, i int) []any {
		e := events[i]
		return append(args, e.Seq, e.Type, string(e.Payload))
	}); err != nil {
		return err
	}
	if err := s.insertRows(ctx, tx, putMessages, put, len(cp.Messages), func(args []any, i int) []any {
		m := cp.Messages[i]
		return append(args, m.Hash, m.Index, string(m.Body))
	}); err != nil {
		return err
	}
	blobs, err := newBlobs(ctx, tx, cp.ThreadID, cp.Blobs)
	if err != nil {
		return err
	}
	if err := s.insertRows(ctx, tx, putBlobs, []any{cp.ThreadID, now}, len(blobs), func(args []any, i int) []any {
		b := blobs[i]
		return append(args, b.Hash, string(b.Body))
	}); err != nil {
		return err
	}
	if cp.Settles != 0 && settle {
		// Folded into this checkpoint's state: a resume must not apply them again.
		if _, err := tx.in(sqlSettle).ExecContext(ctx, cp.ThreadID, cp.Settles); err != nil {
			return err
		}
	}
	if hook := s.hook.Load(); hook != nil {
		(*hook)("checkpoint-written")
	}
	return tx.commit()
}

// bigBlob is the body size from which a put asks whether the thread
// holds a blob before it inserts it (see sqlHasBlob).
const bigBlob = 16 << 10

// newBlobs are the blobs of a put but the large ones the thread holds
// already: what INSERT OR IGNORE would keep, without copying the others.
func newBlobs(ctx context.Context, tx *wtx, thread string, blobs []store.Blob) ([]store.Blob, error) {
	out := make([]store.Blob, 0, len(blobs))
	for _, b := range blobs {
		if len(b.Body) >= bigBlob {
			var one int
			err := tx.in(sqlHasBlob).QueryRowContext(ctx, thread, b.Hash).Scan(&one)
			if err == nil {
				continue // held: the first copy stays
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return nil, err
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// rowsInsert is a multi-row INSERT: head, then for each row open, the
// row's width parameters and ")".
type rowsInsert struct {
	kind         int // its place in pool.rows
	head, open   string
	fixed, width int // the put's parameters, each row's
}

// maxRows caps the rows of one INSERT.
const maxRows = 16

// query is the INSERT of n rows.
func (q rowsInsert) query(n int) string {
	var b strings.Builder
	b.WriteString(q.head)
	p := q.fixed
	for r := range n {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteString(q.open)
		for range q.width {
			p++
			fmt.Fprintf(&b, ", ?%d", p)
		}
		b.WriteString(")")
	}
	return b.String()
}

// insertRows inserts n rows, up to maxRows a statement (a statement a
// row cost a put more than its rows did), once writer.ready prepared them.
// row appends row i's own parameters.
func (s *Store) insertRows(ctx context.Context, tx *wtx, q rowsInsert, fixed []any, n int, row func(args []any, i int) []any) error {
	for from := 0; from < n; from += maxRows {
		count := min(n-from, maxRows)
		args := append(make([]any, 0, len(fixed)+count*q.width), fixed...)
		for i := from; i < from+count; i++ {
			args = row(args, i)
		}
		if _, err := tx.s.w.rows[q.kind][count-1].ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// compare looks for a stored checkpoint with cp's ID and says whether it
// holds the same content.
func (s *Store) compare(ctx context.Context, tx *wtx, cp store.Checkpoint, events []store.Event) (found, same bool, err error) {
	var parent, rerootedFrom sql.NullInt64
	var base bool
	var meta, state []byte
	err = tx.in(sqlCheckpoint).QueryRowContext(ctx, cp.ThreadID, cp.ID).Scan(&parent, &rerootedFrom, &base, &meta, &state)
	if errors.Is(err, sql.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	old, err := queryEvents(ctx, tx.in(sqlEvents), cp.ThreadID, cp.ThreadID, cp.ID)
	if err != nil {
		return false, false, err
	}
	return true, check.SameParent(parent.Int64, rerootedFrom.Int64, cp.ParentID) && check.SameJSON(state, cp.State) &&
		check.SameMeta(meta, cp.Meta) && base == cp.Base && check.SameEvents(old, events), nil
}

// nullText stores an absent document as NULL.
// listedState is the state the thread's row lists with its newest, as
// History does: only a row without meta's (an engine's turn does not
// bind its state twice).
func listedState(meta sql.NullString, state []byte) sql.NullString {
	if meta.Valid {
		return sql.NullString{}
	}
	return sql.NullString{String: string(state), Valid: true}
}

func nullText(doc []byte) sql.NullString {
	return sql.NullString{String: string(doc), Valid: len(doc) > 0}
}

// epochs are a thread's writer epoch (NULL: it has none) and the store's
// epoch counter (NULL: its row is gone), as one statement read them.
type epochs struct{ current, issued sql.NullInt64 }

// fenced is fence on epochs read already.
func (e epochs) fenced(thread string, epoch int64) error {
	if epoch == 0 {
		return nil
	}
	var issued int64 // read only for a thread without an epoch, as fence does
	if !e.current.Valid {
		if !e.issued.Valid {
			return sql.ErrNoRows // as fence's read of the counter says
		}
		issued = e.issued.Int64
	}
	return check.Fenced(thread, epoch, e.current.Int64, issued)
}

// fence refuses, inside the write's transaction, a write whose epoch is
// not the thread's current one. Unfenced writes skip the query; the
// counter is read only for a thread without an epoch.
func (s *Store) fence(ctx context.Context, tx *wtx, thread string, epoch int64) error {
	if epoch == 0 {
		return nil
	}
	var current, issued int64
	err := tx.in(sqlEpoch).QueryRowContext(ctx, thread).Scan(&current)
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.in(sqlIssued).QueryRowContext(ctx).Scan(&issued)
	}
	if err != nil {
		return err
	}
	return check.Fenced(thread, epoch, current, issued)
}

// Fence implements store.Store. BEGIN IMMEDIATE orders it with every write
// of every process on the file.
func (s *Store) Fence(ctx context.Context, thread string) (epoch int64, err error) {
	defer s.wrap(ctx, &err, "fence thread %v", check.Name(thread))
	if err := check.Text("thread id", thread); err != nil {
		return 0, err
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.end()
	ctx = quiet(ctx)
	if err := tx.in(sqlNextEpoch).QueryRowContext(ctx, thread).Scan(&epoch); err != nil {
		return 0, err
	}
	if _, err := tx.in(sqlFence).ExecContext(ctx, thread, epoch, s.now()); err != nil {
		return 0, err
	}
	return epoch, tx.commit()
}

// SetTxHook sets a function PutCheckpoint calls with "checkpoint-written"
// once a new checkpoint's rows are written, before COMMIT: the crash drills
// kill the process there. nil removes it.
func (s *Store) SetTxHook(hook func(stage string)) {
	if hook == nil {
		s.hook.Store(nil)
		return
	}
	s.hook.Store(&hook)
}

func (s *Store) PutWrites(ctx context.Context, w store.TaskWrites) (err error) {
	defer s.wrap(ctx, &err, "put writes of task %v at checkpoint %d of thread %v", check.Name(w.TaskID), w.CheckpointID, check.Name(w.ThreadID))
	if err := check.Writes(w); err != nil {
		return err
	}
	tx, err := s.beginAs(ctx, s.lazy(w.ThreadID))
	if err != nil {
		return err
	}
	defer tx.end()
	ctx = quiet(ctx)
	var old []byte
	var ep epochs
	var cpOK bool
	if err := tx.in(sqlPutWritesState).QueryRowContext(ctx, w.ThreadID, w.CheckpointID, w.TaskID).Scan(&old, &ep.current, &ep.issued, &cpOK); err != nil {
		return err
	}
	found := old != nil
	if found && check.SameJSON(old, w.Writes) {
		return nil
	}
	if err := ep.fenced(w.ThreadID, w.Epoch); err != nil {
		return err
	}
	switch {
	case found:
		return store.ErrConflict
	case !cpOK:
		return fmt.Errorf("checkpoint %d: %w", w.CheckpointID, store.ErrNotFound)
	}
	if _, err := tx.in(sqlPutWrites).ExecContext(ctx, w.ThreadID, w.CheckpointID, w.TaskID, string(w.Writes), s.now()); err != nil {
		return err
	}
	return tx.commit()
}

// checkpointEvery is how many commits wake the checkpointer: about 450
// WAL frames at a turn's 7 a put, below SQLite's own autocheckpoint
// (1,000 frames), which stays as the fallback.
const checkpointEvery = 64

// startCheckpointer starts the goroutine that folds the WAL into the
// file (a PASSIVE checkpoint, on its own connection) every
// checkpointEvery commits. Otherwise the commit that passes 1,000
// frames does it, with two fsyncs: a tenth of the writes' CPU, and the
// slowest puts. A commit is durable in the WAL either way.
func (s *Store) startCheckpointer(dsn string) error {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	s.ckpt, s.ckptDone = make(chan struct{}, 1), make(chan struct{})
	go func() {
		defer close(s.ckptDone)
		defer db.Close()
		for {
			select {
			case <-s.done:
				return
			case <-s.ckpt:
			}
			// Until it has caught up with the writes meanwhile: only a WAL
			// folded whole starts over (at the next commit) rather than
			// growing to SQLite's own checkpoint. Best effort: one that
			// fails leaves the frames to the next, or to SQLite's own.
			for range 8 {
				var busy, log, done int
				if err := db.QueryRow(`PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done); err != nil || done >= log {
					break
				}
			}
		}
	}()
	return nil
}

// committed counts a write's commit and wakes the checkpointer every
// checkpointEvery of them, without waiting for it.
func (s *Store) committed() {
	if s.ckpt != nil && s.commits.Add(1)%checkpointEvery == 0 {
		select {
		case s.ckpt <- struct{}{}:
		default: // it is checkpointing already
		}
	}
}
