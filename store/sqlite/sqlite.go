// Package sqlite is the embedded store.Store: one SQLite file (pure Go, no
// cgo, nothing to install) that survives kill -9, with per-thread writer
// locks that the OS releases when their process dies.
package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"rewind/store"
	"rewind/store/internal/check"
)

// schemaVersion is the newest store schema this binary knows.
const schemaVersion = 6

// migrations[v] takes a store from schema v to v+1. The parent of a
// checkpoint is checked by PutCheckpoint, not by a foreign key: that would
// need one more index on every row.
var migrations = []string{
	`CREATE TABLE graph_checkpoints (
		thread_id     TEXT    NOT NULL,
		checkpoint_id INTEGER NOT NULL,
		parent_id     INTEGER,          -- NULL for a root
		state         TEXT    NOT NULL, -- the engine's JSON document, verbatim
		created_at    INTEGER NOT NULL, -- unix microseconds
		PRIMARY KEY (thread_id, checkpoint_id)
	);
	CREATE TABLE graph_writes (
		thread_id     TEXT    NOT NULL,
		checkpoint_id INTEGER NOT NULL,
		task_id       TEXT    NOT NULL,
		writes        TEXT    NOT NULL,
		created_at    INTEGER NOT NULL,
		PRIMARY KEY (thread_id, checkpoint_id, task_id),
		FOREIGN KEY (thread_id, checkpoint_id) REFERENCES graph_checkpoints (thread_id, checkpoint_id)
	);
	CREATE TABLE graph_events (
		thread_id     TEXT    NOT NULL,
		checkpoint_id INTEGER NOT NULL,
		seq           INTEGER NOT NULL,
		type          TEXT    NOT NULL,
		payload       TEXT    NOT NULL,
		created_at    INTEGER NOT NULL,
		PRIMARY KEY (thread_id, checkpoint_id, seq),
		FOREIGN KEY (thread_id, checkpoint_id) REFERENCES graph_checkpoints (thread_id, checkpoint_id)
	);`,
	// 2: side effects (seed 002), keyed by the operation id the engine
	// records before the call, so a retry finds the draft it already made.
	`CREATE TABLE graph_drafts (
		thread_id    TEXT    NOT NULL,
		operation_id TEXT    NOT NULL,
		body         TEXT    NOT NULL, -- JSON, verbatim
		created_at   INTEGER NOT NULL, -- unix microseconds
		PRIMARY KEY (thread_id, operation_id)
	);`,
	// 3: writer epochs for fencing takeovers (Store.Fence).
	`CREATE TABLE graph_epochs (
		thread_id TEXT    NOT NULL PRIMARY KEY,
		epoch     INTEGER NOT NULL,
		fenced_at INTEGER NOT NULL -- unix microseconds
	);`,
	// 4: retention (Store.Prune). A kept checkpoint whose parent was pruned
	// has parent_id NULL and the parent it had here; NULL otherwise.
	`ALTER TABLE graph_checkpoints ADD COLUMN rerooted_from INTEGER;`,
	// 5: long conversations. graph_checkpoints is rebuilt rather than
	// altered: ADD COLUMN would put meta after state in every record, and
	// SQLite reaches a column past a large value only by reading the value's
	// whole overflow chain, so listing metadata would read every state. Here
	// the small columns come first and the documents last. Old rows are
	// whole states, hence bases. migrate turns foreign keys off for this
	// (graph_writes and graph_events refer to the table) and checks them
	// before committing.
	`CREATE TABLE graph_checkpoints_v5 (
		thread_id     TEXT    NOT NULL,
		checkpoint_id INTEGER NOT NULL,
		parent_id     INTEGER,                    -- NULL for a root
		rerooted_from INTEGER,                    -- the pruned parent of a re-rooted row
		base          INTEGER NOT NULL DEFAULT 1, -- 1: state reads without its ancestors
		created_at    INTEGER NOT NULL,           -- unix microseconds
		meta          TEXT,                       -- the engine's listing document; NULL before v5
		blob_refs     TEXT,                       -- JSON array of blob hashes, or NULL
		state         TEXT    NOT NULL,           -- the engine's JSON document, verbatim
		rebased       TEXT,                       -- Prune's self-contained state, or NULL
		PRIMARY KEY (thread_id, checkpoint_id)
	);
	INSERT INTO graph_checkpoints_v5 (thread_id, checkpoint_id, parent_id, rerooted_from, created_at, state)
		SELECT thread_id, checkpoint_id, parent_id, rerooted_from, created_at, state FROM graph_checkpoints;
	DROP TABLE graph_checkpoints;
	ALTER TABLE graph_checkpoints_v5 RENAME TO graph_checkpoints;
	-- Stored once per thread by content hash, apart from the checkpoints.
	CREATE TABLE graph_messages (
		thread_id     TEXT    NOT NULL,
		hash          TEXT    NOT NULL,
		idx           INTEGER NOT NULL,
		body          TEXT    NOT NULL, -- JSON, verbatim
		checkpoint_id INTEGER NOT NULL, -- the put that stored it first
		created_at    INTEGER NOT NULL, -- unix microseconds
		PRIMARY KEY (thread_id, hash)
	);
	CREATE INDEX graph_messages_idx ON graph_messages (thread_id, idx);
	CREATE TABLE graph_blobs (
		thread_id  TEXT    NOT NULL,
		hash       TEXT    NOT NULL,
		body       TEXT    NOT NULL, -- JSON, verbatim
		created_at INTEGER NOT NULL, -- unix microseconds
		PRIMARY KEY (thread_id, hash)
	);`,
	// 6: one epoch counter for the store, so that an epoch is never handed
	// out twice (Store.Fence), also after DeleteThread removed a thread's
	// row of graph_epochs. It starts above every epoch handed out so far.
	`CREATE TABLE graph_epoch_counter (
		issued INTEGER NOT NULL -- the highest epoch Fence handed out, to any thread
	);
	INSERT INTO graph_epoch_counter (issued) SELECT coalesce(max(epoch), 0) FROM graph_epochs;`,
}

// pragmas are every connection's. secure_delete overwrites deleted rows
// with zeros, so a deleted thread (or a pruned checkpoint) leaves no text
// in the file (DeleteThread empties the WAL too: see wipeWAL).
const pragmas = "_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)" +
	"&_pragma=secure_delete(1)"

// readOnlyPragmas are the connections' of a store this process cannot
// write (see access).
const readOnlyPragmas = "_pragma=busy_timeout(5000)&_pragma=query_only(1)"

// Store is safe for concurrent use, and several processes may open the same file.
type Store struct {
	path  string // as given, for messages
	locks string // absolute: a later chdir must not move the locks
	// readOnly says why this process cannot write the file (see access);
	// empty when it can.
	readOnly string
	w        pool // one connection: SQLite has one writer at a time anyway
	r        pool
	hook     atomic.Pointer[func(stage string)]
	// unwiped is set when a reader kept wipeWAL from emptying the WAL
	// after a delete: the next write transaction, or Close, tries again.
	unwiped atomic.Bool
}

// pool is a database handle with its statements prepared once: parsing is
// about a third of the cost of a point query.
type pool struct {
	*sql.DB
	stmts map[string]*sql.Stmt
}

func (p *pool) prepare(ctx context.Context, queries ...string) error {
	p.stmts = make(map[string]*sql.Stmt, len(queries))
	for _, q := range queries {
		st, err := p.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		p.stmts[q] = st
	}
	return nil
}

// The statements, all with bound parameters.
const (
	sqlNewest        = `SELECT max(checkpoint_id) FROM graph_checkpoints WHERE thread_id = ?`
	sqlExists        = `SELECT 1 FROM graph_checkpoints WHERE thread_id = ? AND checkpoint_id = ?`
	sqlCheckpoint    = `SELECT parent_id, rerooted_from, base, meta, state FROM graph_checkpoints WHERE thread_id = ? AND checkpoint_id = ?`
	sqlPutCheckpoint = `INSERT INTO graph_checkpoints (thread_id, checkpoint_id, parent_id, base, created_at, meta, blob_refs, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	sqlPutEvent      = `INSERT INTO graph_events (thread_id, checkpoint_id, seq, type, payload, created_at) VALUES (?, ?, ?, ?, ?, ?)`
	// A hash the thread holds already keeps its first row.
	sqlPutMessage   = `INSERT INTO graph_messages (thread_id, hash, idx, body, checkpoint_id, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	sqlPutBlob      = `INSERT INTO graph_blobs (thread_id, hash, body, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`
	sqlSettle       = `DELETE FROM graph_writes WHERE thread_id = ? AND checkpoint_id = ?`
	sqlTaskWrites   = `SELECT writes FROM graph_writes WHERE thread_id = ? AND checkpoint_id = ? AND task_id = ?`
	sqlPutWrites    = `INSERT INTO graph_writes (thread_id, checkpoint_id, task_id, writes, created_at) VALUES (?, ?, ?, ?, ?)`
	sqlDeleteEvents = `DELETE FROM graph_events WHERE thread_id = ?`
	sqlDeleteWrites = `DELETE FROM graph_writes WHERE thread_id = ?`
	sqlDeleteThread = `DELETE FROM graph_checkpoints WHERE thread_id = ?`
	sqlDeleteMsgs   = `DELETE FROM graph_messages WHERE thread_id = ?`
	sqlDeleteBlobs  = `DELETE FROM graph_blobs WHERE thread_id = ?`
	sqlDeleteDrafts = `DELETE FROM graph_drafts WHERE thread_id = ?`
	sqlDeleteEpoch  = `DELETE FROM graph_epochs WHERE thread_id = ?`
	sqlEpoch        = `SELECT epoch FROM graph_epochs WHERE thread_id = ?`
	sqlIssued       = `SELECT issued FROM graph_epoch_counter`
	sqlPutDraft     = `INSERT INTO graph_drafts (thread_id, operation_id, body, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`
	// The next epoch is above the counter and, in case the counter ever
	// fell behind, above the thread's own.
	sqlNextEpoch = `UPDATE graph_epoch_counter
		SET issued = max(issued, coalesce((SELECT epoch FROM graph_epochs WHERE thread_id = ?), 0)) + 1 RETURNING issued`
	sqlFence = `INSERT INTO graph_epochs (thread_id, epoch, fenced_at) VALUES (?1, ?2, ?3)
		ON CONFLICT (thread_id) DO UPDATE SET epoch = ?2, fenced_at = ?3`

	// Prune's statements take the ids as one JSON array (?2), a single
	// bound parameter however many there are.
	pruneIDs      = `(SELECT value FROM json_each(?2))`
	sqlPruneFound = `SELECT checkpoint_id FROM graph_checkpoints WHERE thread_id = ?1 AND checkpoint_id IN ` + pruneIDs
	pruneKept     = ` WHERE thread_id = ?1 AND parent_id IN ` + pruneIDs + ` AND checkpoint_id NOT IN ` + pruneIDs
	// The kept rows whose parent goes, and whether each reads on its own.
	sqlPruneRerooted    = `SELECT checkpoint_id, parent_id, base OR rebased IS NOT NULL, blob_refs FROM graph_checkpoints` + pruneKept
	sqlPruneReroot      = `UPDATE graph_checkpoints SET parent_id = NULL, rerooted_from = parent_id` + pruneKept
	sqlRebase           = `UPDATE graph_checkpoints SET rebased = ?3, blob_refs = ?4 WHERE thread_id = ?1 AND checkpoint_id = ?2`
	sqlPruneWrites      = `DELETE FROM graph_writes WHERE thread_id = ?1 AND checkpoint_id IN ` + pruneIDs
	sqlPruneEvents      = `DELETE FROM graph_events WHERE thread_id = ?1 AND checkpoint_id IN ` + pruneIDs
	sqlPruneCheckpoints = `DELETE FROM graph_checkpoints WHERE thread_id = ?1 AND checkpoint_id IN ` + pruneIDs
	// blob_refs come before state in the record: this reads no state.
	sqlPruneBlobs = `DELETE FROM graph_blobs WHERE thread_id = ?1 AND hash NOT IN
		(SELECT r.value FROM graph_checkpoints c, json_each(c.blob_refs) r WHERE c.thread_id = ?1)`

	// Every reader of checkpoints scans these columns, in this order.
	cpColumns         = `checkpoint_id, parent_id, rerooted_from, base, created_at, meta, blob_refs`
	selectCheckpoints = `SELECT ` + cpColumns + `, state, rebased FROM graph_checkpoints `
	sqlGet            = selectCheckpoints + `WHERE thread_id = ? AND checkpoint_id = ?`
	sqlLatest         = selectCheckpoints + `WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1`
	// A listing reads the state only of rows without meta: SQLite then
	// never loads the state's pages of the others.
	sqlHistory = `SELECT ` + cpColumns + `, CASE WHEN meta IS NULL THEN state END, NULL FROM graph_checkpoints
		WHERE thread_id = ? AND checkpoint_id < ? ORDER BY checkpoint_id DESC LIMIT ?`
	// Chain walks parent_id reading only the small columns, then reads the
	// rows it found. Parents have lower IDs; Chain sorts in Go, so that
	// SQLite does not copy the states into a sorter.
	sqlChain = `WITH RECURSIVE chain (id, parent, last) AS (
			SELECT checkpoint_id, parent_id, base OR rebased IS NOT NULL OR parent_id IS NULL
			FROM graph_checkpoints WHERE thread_id = ?1 AND checkpoint_id = ?2
			UNION ALL
			SELECT c.checkpoint_id, c.parent_id, c.base OR c.rebased IS NOT NULL OR c.parent_id IS NULL
			FROM chain JOIN graph_checkpoints c ON c.thread_id = ?1 AND c.checkpoint_id = chain.parent
			WHERE NOT chain.last
		)
		SELECT c.checkpoint_id, c.parent_id, c.rerooted_from, c.base, c.created_at, c.meta, c.blob_refs, c.state, c.rebased
		FROM chain CROSS JOIN graph_checkpoints c ON c.thread_id = ?1 AND c.checkpoint_id = chain.id`
	// Messages and Blobs take the hashes as one JSON array (?2).
	selectMessages = `SELECT hash, idx, body, checkpoint_id, created_at FROM graph_messages `
	sqlMessages    = selectMessages + `WHERE thread_id = ?1 AND hash IN (SELECT value FROM json_each(?2))`
	sqlMessagesAt  = selectMessages + `WHERE thread_id = ?1 AND idx = ?2 ORDER BY checkpoint_id, hash`
	sqlBlobs       = `SELECT hash, body FROM graph_blobs WHERE thread_id = ?1 AND hash IN (SELECT value FROM json_each(?2))`
	// Size counts as memory.Store.Size does: octet_length of every text
	// (SQLite takes it from the record header, without loading the text),
	// the thread id once per row, 8 per number and time column.
	sqlSize = `SELECT
		(SELECT coalesce(sum(coalesce(octet_length(meta), 0) + octet_length(state) + coalesce(octet_length(rebased), 0) +
			coalesce((SELECT sum(octet_length(value)) FROM json_each(blob_refs)), 0)), 0) + count(*) * (octet_length(?1) + 5*8)
			FROM graph_checkpoints WHERE thread_id = ?1) +
		(SELECT coalesce(sum(octet_length(task_id) + octet_length(writes)), 0) + count(*) * (octet_length(?1) + 2*8)
			FROM graph_writes WHERE thread_id = ?1) +
		(SELECT coalesce(sum(octet_length(type) + octet_length(payload)), 0) + count(*) * (octet_length(?1) + 3*8)
			FROM graph_events WHERE thread_id = ?1) +
		(SELECT coalesce(sum(octet_length(hash) + octet_length(body)), 0) + count(*) * (octet_length(?1) + 3*8)
			FROM graph_messages WHERE thread_id = ?1) +
		(SELECT coalesce(sum(octet_length(hash) + octet_length(body)), 0) + count(*) * (octet_length(?1) + 8)
			FROM graph_blobs WHERE thread_id = ?1) +
		(SELECT coalesce(sum(octet_length(operation_id) + octet_length(body)), 0) + count(*) * (octet_length(?1) + 8)
			FROM graph_drafts WHERE thread_id = ?1) +
		(SELECT count(*) * (octet_length(?1) + 2*8) FROM graph_epochs WHERE thread_id = ?1)`
	sqlWrites       = `SELECT checkpoint_id, task_id, writes, created_at FROM graph_writes WHERE thread_id = ? AND checkpoint_id = ? ORDER BY task_id`
	sqlThreadWrites = `SELECT checkpoint_id, task_id, writes, created_at FROM graph_writes WHERE thread_id = ? ORDER BY checkpoint_id, task_id`
	selectEvents    = `SELECT checkpoint_id, seq, type, payload, created_at FROM graph_events `
	sqlEvents       = selectEvents + `WHERE thread_id = ? AND checkpoint_id = ? ORDER BY seq`
	sqlThreadEvents = selectEvents + `WHERE thread_id = ? ORDER BY checkpoint_id, seq`
	sqlDraft        = `SELECT body, created_at FROM graph_drafts WHERE thread_id = ? AND operation_id = ?`
	sqlDrafts       = `SELECT operation_id, body, created_at FROM graph_drafts WHERE thread_id = ? ORDER BY operation_id`
	// BINARY collation: ordered bytewise, like Go strings.
	sqlThreads = `SELECT thread_id, count(*), max(checkpoint_id), max(created_at) FROM graph_checkpoints GROUP BY thread_id ORDER BY thread_id`
)

var (
	_ store.Store  = (*Store)(nil)
	_ store.Drafts = (*Store)(nil)
)

// Open opens the store in the SQLite file at path, creating the file and its
// directory when missing. It refuses, without writing to it, a file that is
// not a SQLite database, not rewind's, or written by a newer rewind.
func Open(ctx context.Context, path string) (*Store, error) {
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
	// A URI, so that '?', '#' and '%' in the path stay part of the file name.
	uri := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + params
	version, err := inspect(ctx, path, uri)
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, locks: abs + ".locks", readOnly: readOnly}
	conns := pragmas
	if readOnly != "" {
		// No journal_mode: a read-only connection must not try to set it.
		conns = readOnlyPragmas
		switch {
		case version == 0:
			return nil, fmt.Errorf("open sqlite store %s: it is not a rewind store yet, and %s", path, readOnly)
		case version < schemaVersion:
			return nil, fmt.Errorf("open sqlite store %s: it was written by an older rewind (store schema %d, this binary writes %d) and needs an upgrade, but %s", path, version, schemaVersion, readOnly)
		}
	}
	// BEGIN IMMEDIATE takes the write lock up front, so a transaction never
	// fails half-way because another process started writing.
	if s.w.DB, err = sql.Open("sqlite", uri+conns+"&_txlock=immediate"); err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	s.w.SetMaxOpenConns(1)
	if readOnly == "" {
		if err := s.migrate(ctx); err != nil {
			s.w.Close()
			return nil, err
		}
	}
	if s.r.DB, err = sql.Open("sqlite", uri+conns+"&_pragma=query_only(1)"); err != nil {
		s.w.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	s.r.SetMaxOpenConns(n)
	s.r.SetMaxIdleConns(n)
	err = errors.Join(
		s.w.prepare(ctx, sqlNewest, sqlExists, sqlCheckpoint, sqlPutCheckpoint, sqlPutEvent, sqlEvents,
			sqlPutMessage, sqlPutBlob, sqlSettle,
			sqlTaskWrites, sqlPutWrites, sqlDeleteEvents, sqlDeleteWrites, sqlDeleteThread, sqlDeleteMsgs, sqlDeleteBlobs,
			sqlDeleteDrafts, sqlPutDraft, sqlDraft, sqlDeleteEpoch, sqlEpoch, sqlIssued, sqlNextEpoch, sqlFence,
			sqlPruneFound, sqlPruneRerooted, sqlPruneReroot, sqlRebase, sqlPruneWrites, sqlPruneEvents, sqlPruneCheckpoints,
			sqlPruneBlobs),
		s.r.prepare(ctx, sqlGet, sqlLatest, sqlHistory, sqlChain, sqlMessages, sqlMessagesAt, sqlBlobs, sqlSize,
			sqlWrites, sqlThreadWrites, sqlEvents, sqlThreadEvents, sqlThreads, sqlDraft, sqlDrafts))
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite store %s: prepare statements: %w%s", path, err, hint(err))
	}
	return s, nil
}

// create makes the store's file when it is missing.
func create(path string) error {
	// Private from the start: states hold conversations. SQLite gives its
	// -wal and -shm files the same mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("open sqlite store %s: create the file: %w; choose a writable location", path, err)
	}
	return nil
}

// inspect checks the file through a read-only connection, before anything
// (such as switching it to WAL) can change it, and returns its store
// schema version (0: a new file).
func inspect(ctx context.Context, path, uri string) (int, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("open sqlite store %s: not a regular file; name a database file", path)
	}
	if fi.Size() == 0 {
		return 0, nil
	}
	db, err := sql.Open("sqlite", uri+"_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		return 0, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	defer db.Close()
	var tables, ours int
	err = db.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE name = 'rewind_store_schema')
		FROM sqlite_schema WHERE type = 'table'`).Scan(&tables, &ours)
	if code(err) == sqlite3.SQLITE_NOTADB {
		return 0, fmt.Errorf("open sqlite store %s: the file is not a SQLite database; rewind left it untouched; name a new file or move this one away", path)
	}
	if err != nil {
		return 0, fmt.Errorf("open sqlite store %s: read it: %w%s", path, err, hint(err))
	}
	if ours == 0 {
		if tables > 0 {
			return 0, fmt.Errorf("open sqlite store %s: a SQLite database, but not a rewind store (it has no rewind_store_schema table); rewind left it untouched; name a new file", path)
		}
		return 0, nil
	}
	var v int
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM rewind_store_schema`).Scan(&v); err != nil {
		return 0, fmt.Errorf("open sqlite store %s: read its schema version: %w%s", path, err, hint(err))
	}
	return v, checkVersion(path, v)
}

var errNewer = errors.New("it was written by a newer rewind")

func checkVersion(path string, v int) error {
	if v > schemaVersion {
		return fmt.Errorf("open sqlite store %s: %w (store schema %d, this binary knows %d); upgrade rewind to open it", path, errNewer, v, schemaVersion)
	}
	return nil
}

// migrate creates or upgrades the tables, in one transaction so that two
// processes opening a new file at once do not both create them.
func (s *Store) migrate(ctx context.Context) (err error) {
	defer func() {
		if err != nil && !errors.Is(err, errNewer) {
			err = fmt.Errorf("open sqlite store %s: create or upgrade its tables: %w%s", s.path, err, hint(err))
		}
	}()
	// Rebuilding a table that others refer to (schema 5) needs foreign keys
	// off, and SQLite ignores that pragma inside a transaction: so it is
	// set on the connection around it. The write pool has that one
	// connection.
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return err
	}
	err = s.upgrade(ctx, conn)
	// Even after a cancelled upgrade: the connection goes back to the pool.
	if _, on := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`); on != nil && err == nil {
		err = on
	}
	return err
}

func (s *Store) upgrade(ctx context.Context, conn *sql.Conn) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS rewind_store_schema (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var v int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM rewind_store_schema`).Scan(&v); err != nil {
		return err
	}
	if err := checkVersion(s.path, v); err != nil {
		return err
	}
	if v == schemaVersion {
		return nil
	}
	for ; v < schemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("schema %d to %d: %w", v, v+1, err)
		}
	}
	// What the foreign keys would have checked: the rebuilt table must
	// still hold the checkpoint of every write and event.
	var table string
	switch err := tx.QueryRowContext(ctx, `PRAGMA foreign_key_check`).Scan(&table, new(any), new(any), new(any)); {
	case err == nil:
		return fmt.Errorf("schema %d: a row of %s refers to a missing checkpoint; nothing was changed", schemaVersion, table)
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM rewind_store_schema`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO rewind_store_schema (version) VALUES (?)`, schemaVersion); err != nil {
		return err
	}
	return tx.Commit()
}

func code(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// hint tells what to do about the SQLite errors a user can fix.
func hint(err error) string {
	switch code(err) {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return "; another process is holding the database, try again"
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_AUTH:
		return "; check that the file and its directory are writable"
	case sqlite3.SQLITE_FULL:
		return "; free some disk space"
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
	*err = fmt.Errorf("sqlite store %s: %s: %w%s", s.path, fmt.Sprintf(format, args...), *err, hint(*err))
}

func micros(t int64) time.Time { return time.UnixMicro(t).UTC() }

func nullID(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }

// begin starts a write transaction (BEGIN IMMEDIATE), or says why this
// process cannot write the store.
func (s *Store) begin(ctx context.Context) (*sql.Tx, error) {
	if s.readOnly != "" {
		return nil, errors.New(s.readOnly)
	}
	if s.unwiped.Load() {
		s.wipeWAL(ctx)
	}
	return s.w.BeginTx(ctx, nil)
}

// in runs one of the write pool's statements inside tx.
func (s *Store) in(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	return tx.StmtContext(ctx, s.w.stmts[query])
}

func (s *Store) exists(ctx context.Context, tx *sql.Tx, thread string, id int64) (bool, error) {
	var one int
	err := s.in(ctx, tx, sqlExists).QueryRowContext(ctx, thread, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (s *Store) PutCheckpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) (err error) {
	defer s.wrap(ctx, &err, "put checkpoint %d of thread %v", cp.ID, check.Name(cp.ThreadID))
	if events, err = check.Put(cp, events); err != nil {
		return err
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var newest sql.NullInt64
	if err := s.in(ctx, tx, sqlNewest).QueryRowContext(ctx, cp.ThreadID).Scan(&newest); err != nil {
		return err
	}
	var found, same bool
	if newest.Valid && cp.ID <= newest.Int64 {
		if found, same, err = s.compare(ctx, tx, cp, events); err != nil || same {
			return err
		}
	}
	if err := s.fence(ctx, tx, cp.ThreadID, cp.Epoch); err != nil {
		return err
	}
	switch {
	case found:
		return store.ErrConflict
	case newest.Valid && cp.ID < newest.Int64:
		return fmt.Errorf("the newest is %d: %w", newest.Int64, store.ErrStale)
	}
	if cp.ParentID != 0 {
		if ok, err := s.exists(ctx, tx, cp.ThreadID, cp.ParentID); !ok {
			if err == nil {
				err = fmt.Errorf("parent checkpoint %d: %w", cp.ParentID, store.ErrNotFound)
			}
			return err
		}
	}
	refs, err := blobRefs(cp.BlobRefs)
	if err != nil {
		return err
	}
	now := time.Now().UnixMicro()
	if _, err := s.in(ctx, tx, sqlPutCheckpoint).ExecContext(ctx, cp.ThreadID, cp.ID, nullID(cp.ParentID), cp.Base, now,
		nullText(cp.Meta), refs, string(cp.State)); err != nil {
		return err
	}
	for _, e := range events {
		if _, err := s.in(ctx, tx, sqlPutEvent).ExecContext(ctx, cp.ThreadID, cp.ID, e.Seq, e.Type, string(e.Payload), now); err != nil {
			return err
		}
	}
	for _, m := range cp.Messages {
		if _, err := s.in(ctx, tx, sqlPutMessage).ExecContext(ctx, cp.ThreadID, m.Hash, m.Index, string(m.Body), cp.ID, now); err != nil {
			return err
		}
	}
	for _, b := range cp.Blobs {
		if _, err := s.in(ctx, tx, sqlPutBlob).ExecContext(ctx, cp.ThreadID, b.Hash, string(b.Body), now); err != nil {
			return err
		}
	}
	if cp.Settles != 0 {
		// Folded into this checkpoint's state: a resume must not apply them again.
		if _, err := s.in(ctx, tx, sqlSettle).ExecContext(ctx, cp.ThreadID, cp.Settles); err != nil {
			return err
		}
	}
	if hook := s.hook.Load(); hook != nil {
		(*hook)("checkpoint-written")
	}
	return tx.Commit()
}

// compare looks for a stored checkpoint with cp's ID and says whether it
// holds the same content.
func (s *Store) compare(ctx context.Context, tx *sql.Tx, cp store.Checkpoint, events []store.Event) (found, same bool, err error) {
	var parent, rerootedFrom sql.NullInt64
	var base bool
	var meta, state []byte
	err = s.in(ctx, tx, sqlCheckpoint).QueryRowContext(ctx, cp.ThreadID, cp.ID).Scan(&parent, &rerootedFrom, &base, &meta, &state)
	if errors.Is(err, sql.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	old, err := queryEvents(ctx, s.in(ctx, tx, sqlEvents), cp.ThreadID, cp.ThreadID, cp.ID)
	if err != nil {
		return false, false, err
	}
	return true, check.SameParent(parent.Int64, rerootedFrom.Int64, cp.ParentID) && check.SameJSON(state, cp.State) &&
		check.SameMeta(meta, cp.Meta) && base == cp.Base && check.SameEvents(old, events), nil
}

// nullText stores an absent document as NULL.
func nullText(doc []byte) sql.NullString {
	return sql.NullString{String: string(doc), Valid: len(doc) > 0}
}

// blobRefs is the blob_refs column: a JSON array, NULL when empty.
func blobRefs(refs []string) (sql.NullString, error) {
	if len(refs) == 0 {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(refs)
	return sql.NullString{String: string(b), Valid: true}, err
}

// hashList is a JSON array of hashes for json_each, as text (SQLite reads a
// blob as JSONB): [] rather than null.
func hashList(hashes []string) (string, error) {
	if hashes == nil {
		hashes = []string{}
	}
	b, err := json.Marshal(hashes)
	return string(b), err
}

// fence refuses, inside the write's transaction, a write whose epoch is
// not the thread's current one. Unfenced writes skip the query; the
// counter is read only for a thread without an epoch.
func (s *Store) fence(ctx context.Context, tx *sql.Tx, thread string, epoch int64) error {
	if epoch == 0 {
		return nil
	}
	var current, issued int64
	err := s.in(ctx, tx, sqlEpoch).QueryRowContext(ctx, thread).Scan(&current)
	if errors.Is(err, sql.ErrNoRows) {
		err = s.in(ctx, tx, sqlIssued).QueryRowContext(ctx).Scan(&issued)
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
	defer tx.Rollback()
	if err := s.in(ctx, tx, sqlNextEpoch).QueryRowContext(ctx, thread).Scan(&epoch); err != nil {
		return 0, err
	}
	if _, err := s.in(ctx, tx, sqlFence).ExecContext(ctx, thread, epoch, time.Now().UnixMicro()); err != nil {
		return 0, err
	}
	return epoch, tx.Commit()
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
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var old []byte
	err = s.in(ctx, tx, sqlTaskWrites).QueryRowContext(ctx, w.ThreadID, w.CheckpointID, w.TaskID).Scan(&old)
	found := err == nil
	switch {
	case found && check.SameJSON(old, w.Writes):
		return nil
	case !found && !errors.Is(err, sql.ErrNoRows):
		return err
	}
	if err := s.fence(ctx, tx, w.ThreadID, w.Epoch); err != nil {
		return err
	}
	if found {
		return store.ErrConflict
	}
	if ok, err := s.exists(ctx, tx, w.ThreadID, w.CheckpointID); !ok {
		if err == nil {
			err = fmt.Errorf("checkpoint %d: %w", w.CheckpointID, store.ErrNotFound)
		}
		return err
	}
	if _, err := s.in(ctx, tx, sqlPutWrites).ExecContext(ctx, w.ThreadID, w.CheckpointID, w.TaskID, string(w.Writes), time.Now().UnixMicro()); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *Store) checkpoints(ctx context.Context, thread, query string, args ...any) ([]store.Checkpoint, error) {
	rows, err := s.r.stmts[query].QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Checkpoint
	for rows.Next() {
		cp := store.Checkpoint{ThreadID: thread}
		var parent, rerootedFrom sql.NullInt64
		var created int64
		var refs []byte
		if err := rows.Scan(&cp.ID, &parent, &rerootedFrom, &cp.Base, &created, &cp.Meta, &refs, &cp.State, &cp.Rebased); err != nil {
			return nil, err
		}
		if refs != nil {
			if err := json.Unmarshal(refs, &cp.BlobRefs); err != nil {
				return nil, fmt.Errorf("checkpoint %d: its blob references: %w", cp.ID, err)
			}
		}
		cp.ParentID, cp.RerootedFrom, cp.CreatedAt = parent.Int64, rerootedFrom.Int64, micros(created)
		out = append(out, cp)
	}
	return out, rows.Err()
}

func (s *Store) one(ctx context.Context, thread, query string, args ...any) (store.Checkpoint, error) {
	cps, err := s.checkpoints(ctx, thread, query, args...)
	if err != nil {
		return store.Checkpoint{}, err
	}
	if len(cps) == 0 {
		return store.Checkpoint{}, store.ErrNotFound
	}
	return cps[0], nil
}

func (s *Store) Get(ctx context.Context, thread string, id int64) (_ store.Checkpoint, err error) {
	defer s.wrap(ctx, &err, "get checkpoint %d of thread %v", id, check.Name(thread))
	return s.one(ctx, thread, sqlGet, thread, id)
}

func (s *Store) Latest(ctx context.Context, thread string) (_ store.Checkpoint, err error) {
	defer s.wrap(ctx, &err, "latest checkpoint of thread %v", check.Name(thread))
	return s.one(ctx, thread, sqlLatest, thread)
}

func (s *Store) History(ctx context.Context, thread string, before int64, limit int) (_ []store.Checkpoint, err error) {
	defer s.wrap(ctx, &err, "history of thread %v", check.Name(thread))
	if before <= 0 {
		before = math.MaxInt64
	}
	if limit <= 0 {
		limit = -1 // no limit, to SQLite
	}
	return s.checkpoints(ctx, thread, sqlHistory, thread, before, limit)
}

// Chain implements store.Store in one query; see sqlChain.
func (s *Store) Chain(ctx context.Context, thread string, id int64) (_ []store.Checkpoint, err error) {
	defer s.wrap(ctx, &err, "chain of checkpoint %d of thread %v", id, check.Name(thread))
	cps, err := s.checkpoints(ctx, thread, sqlChain, thread, id)
	if err != nil {
		return nil, err
	}
	if len(cps) == 0 {
		return nil, store.ErrNotFound
	}
	slices.SortFunc(cps, func(a, b store.Checkpoint) int { return cmp.Compare(b.ID, a.ID) })
	return cps, nil
}

func (s *Store) Messages(ctx context.Context, thread string, hashes []string) (_ []store.Message, err error) {
	defer s.wrap(ctx, &err, "messages of thread %v", check.Name(thread))
	list, err := hashList(hashes)
	if err != nil {
		return nil, err
	}
	return s.messages(ctx, thread, sqlMessages, thread, list)
}

func (s *Store) MessagesAt(ctx context.Context, thread string, index int64) (_ []store.Message, err error) {
	defer s.wrap(ctx, &err, "messages #%d of thread %v", index, check.Name(thread))
	return s.messages(ctx, thread, sqlMessagesAt, thread, index)
}

func (s *Store) messages(ctx context.Context, thread, query string, args ...any) ([]store.Message, error) {
	rows, err := s.r.stmts[query].QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Message
	for rows.Next() {
		m := store.Message{ThreadID: thread}
		var created int64
		if err := rows.Scan(&m.Hash, &m.Index, &m.Body, &m.CheckpointID, &created); err != nil {
			return nil, err
		}
		m.CreatedAt = micros(created)
		out = append(out, m)
	}
	return out, rows.Err()
}

func (s *Store) Blobs(ctx context.Context, thread string, hashes []string) (_ []store.Blob, err error) {
	defer s.wrap(ctx, &err, "blobs of thread %v", check.Name(thread))
	list, err := hashList(hashes)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.stmts[sqlBlobs].QueryContext(ctx, thread, list)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Blob
	for rows.Next() {
		var b store.Blob
		if err := rows.Scan(&b.Hash, &b.Body); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// Size implements store.Store in one query (one snapshot); see sqlSize.
func (s *Store) Size(ctx context.Context, thread string) (n int64, err error) {
	defer s.wrap(ctx, &err, "size of thread %v", check.Name(thread))
	err = s.r.stmts[sqlSize].QueryRowContext(ctx, thread).Scan(&n)
	return n, err
}

func (s *Store) Writes(ctx context.Context, thread string, checkpointID int64) (_ []store.TaskWrites, err error) {
	defer s.wrap(ctx, &err, "writes of checkpoint %d of thread %v", checkpointID, check.Name(thread))
	var rows *sql.Rows
	if checkpointID == 0 {
		rows, err = s.r.stmts[sqlThreadWrites].QueryContext(ctx, thread)
	} else {
		rows, err = s.r.stmts[sqlWrites].QueryContext(ctx, thread, checkpointID)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.TaskWrites
	for rows.Next() {
		w := store.TaskWrites{ThreadID: thread}
		var created int64
		if err := rows.Scan(&w.CheckpointID, &w.TaskID, &w.Writes, &created); err != nil {
			return nil, err
		}
		w.CreatedAt = micros(created)
		out = append(out, w)
	}
	return out, rows.Err()
}

func (s *Store) Events(ctx context.Context, thread string, checkpointID int64) (_ []store.Event, err error) {
	defer s.wrap(ctx, &err, "events of checkpoint %d of thread %v", checkpointID, check.Name(thread))
	if checkpointID == 0 {
		return queryEvents(ctx, s.r.stmts[sqlThreadEvents], thread, thread)
	}
	return queryEvents(ctx, s.r.stmts[sqlEvents], thread, thread, checkpointID)
}

func queryEvents(ctx context.Context, st *sql.Stmt, thread string, args ...any) ([]store.Event, error) {
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Event
	for rows.Next() {
		e := store.Event{ThreadID: thread}
		var created int64
		if err := rows.Scan(&e.CheckpointID, &e.Seq, &e.Type, &e.Payload, &created); err != nil {
			return nil, err
		}
		e.CreatedAt = micros(created)
		out = append(out, e)
	}
	return out, rows.Err()
}

func (s *Store) Threads(ctx context.Context) (_ []store.Thread, err error) {
	defer s.wrap(ctx, &err, "list threads")
	rows, err := s.r.stmts[sqlThreads].QueryContext(ctx)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Thread
	for rows.Next() {
		var th store.Thread
		var updated int64
		if err := rows.Scan(&th.ID, &th.Checkpoints, &th.LatestID, &updated); err != nil {
			return nil, err
		}
		th.UpdatedAt = micros(updated)
		out = append(out, th)
	}
	return out, rows.Err()
}

func (s *Store) DeleteThread(ctx context.Context, thread string) (err error) {
	defer s.wrap(ctx, &err, "delete thread %v", check.Name(thread))
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var deleted int64
	for _, q := range []string{sqlDeleteEvents, sqlDeleteWrites, sqlDeleteThread, sqlDeleteMsgs, sqlDeleteBlobs, sqlDeleteDrafts, sqlDeleteEpoch} {
		res, err := s.in(ctx, tx, q).ExecContext(ctx, thread)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		deleted += n
	}
	if deleted == 0 {
		return store.ErrNotFound
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.wipeWAL(ctx)
	return nil
}

// wipeWAL folds the WAL into the file and empties it, so that the rows a
// delete zeroed in the file do not live on in the WAL's older frames. It
// waits for readers only briefly: while another connection is in the
// middle of a read the WAL cannot start over, and then unwiped has the
// next write transaction (or Close) try again.
func (s *Store) wipeWAL(ctx context.Context) {
	s.unwiped.Store(true)
	conn, err := s.w.Conn(ctx) // the write pool's one connection
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA busy_timeout = 100`); err != nil {
		return
	}
	var busy, log, done int
	err = conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &log, &done)
	_, _ = conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA busy_timeout = 5000`) // as in pragmas
	if err == nil && busy == 0 {
		s.unwiped.Store(false)
	}
}

// Prune implements store.Store, in one BEGIN IMMEDIATE transaction: no
// other writer of the file can add a child of a checkpoint it deletes.
func (s *Store) Prune(ctx context.Context, thread string, ids []int64, rebase []store.Rebase) (res store.PruneResult, err error) {
	defer s.wrap(ctx, &err, "prune thread %v", check.Name(thread))
	ids = append([]int64{}, check.PruneIDs(ids)...) // [] rather than null when empty
	list, err := json.Marshal(ids)
	if err != nil {
		return store.PruneResult{}, err
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return store.PruneResult{}, err
	}
	defer tx.Rollback()
	var newest sql.NullInt64
	if err := s.in(ctx, tx, sqlNewest).QueryRowContext(ctx, thread).Scan(&newest); err != nil {
		return store.PruneResult{}, err
	}
	if !newest.Valid {
		return store.PruneResult{}, store.ErrNotFound
	}
	found, err := s.pruneFound(ctx, tx, thread, list, len(ids))
	if err != nil {
		return store.PruneResult{}, err
	}
	for i, id := range ids {
		if i >= len(found) || found[i] != id {
			return store.PruneResult{}, check.PruneMissing(id)
		}
	}
	if len(ids) > 0 && ids[len(ids)-1] == newest.Int64 {
		return store.PruneResult{}, check.PruneHead(newest.Int64)
	}
	rerooted, refs, err := s.pruneRerooted(ctx, tx, thread, list)
	if err != nil {
		return store.PruneResult{}, err
	}
	selfContained := make(map[int64]bool, len(rerooted))
	for _, r := range rerooted {
		selfContained[r.ID] = r.selfContained
	}
	if err := check.Rebases(rebase, selfContained); err != nil {
		return store.PruneResult{}, err
	}
	if len(ids) == 0 {
		return store.PruneResult{}, nil
	}
	if err := s.pruneRebase(ctx, tx, thread, list, len(rerooted), rebase, refs); err != nil {
		return store.PruneResult{}, err
	}
	counts := [4]int64{}
	for i, q := range []string{sqlPruneWrites, sqlPruneEvents, sqlPruneCheckpoints, sqlPruneBlobs} {
		args := []any{thread, list}
		if q == sqlPruneBlobs {
			args = args[:1] // every blob of the thread that no remaining row refers to
		}
		r, err := s.in(ctx, tx, q).ExecContext(ctx, args...)
		if err != nil {
			return store.PruneResult{}, err
		}
		if counts[i], err = r.RowsAffected(); err != nil {
			return store.PruneResult{}, err
		}
	}
	if counts[2] != int64(len(ids)) {
		return store.PruneResult{}, fmt.Errorf("deleted %d checkpoints, expected %d; nothing was pruned, try again", counts[2], len(ids))
	}
	if err := tx.Commit(); err != nil {
		return store.PruneResult{}, err
	}
	for _, r := range rerooted {
		res.Rerooted = append(res.Rerooted, r.Reroot)
	}
	res.Deleted, res.Writes, res.Events, res.Blobs = ids, int(counts[0]), int(counts[1]), int(counts[3])
	return res, nil
}

// rerooted is a kept checkpoint whose parent a prune deletes.
type rerooted struct {
	store.Reroot
	selfContained bool // a base, or rebased already
}

// pruneRerooted lists the kept checkpoints whose parent is among the ids
// (a JSON array), by ascending ID, with their blob references.
func (s *Store) pruneRerooted(ctx context.Context, tx *sql.Tx, thread string, list []byte) ([]rerooted, map[int64][]string, error) {
	rows, err := s.in(ctx, tx, sqlPruneRerooted).QueryContext(ctx, thread, list)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var out []rerooted
	refs := map[int64][]string{}
	for rows.Next() {
		var r rerooted
		var blobRefs []byte
		if err := rows.Scan(&r.ID, &r.From, &r.selfContained, &blobRefs); err != nil {
			return nil, nil, err
		}
		if blobRefs != nil {
			var hs []string
			if err := json.Unmarshal(blobRefs, &hs); err != nil {
				return nil, nil, fmt.Errorf("checkpoint %d: its blob references: %w", r.ID, err)
			}
			refs[r.ID] = hs
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	slices.SortFunc(out, func(a, b rerooted) int { return cmp.Compare(a.ID, b.ID) })
	return out, refs, nil
}

// pruneRebase re-roots the n kept children of the ids and stores the
// rebases, checked already, adding their blob references to the row's.
func (s *Store) pruneRebase(ctx context.Context, tx *sql.Tx, thread string, list []byte, n int, rebase []store.Rebase, refs map[int64][]string) error {
	r, err := s.in(ctx, tx, sqlPruneReroot).ExecContext(ctx, thread, list)
	if err != nil {
		return err
	}
	if got, err := r.RowsAffected(); err != nil || got != int64(n) {
		if err == nil {
			err = fmt.Errorf("re-rooted %d checkpoints, expected %d; nothing was pruned, try again", got, n)
		}
		return err
	}
	for _, rb := range rebase {
		blobs, err := blobRefs(append(slices.Clone(refs[rb.ID]), rb.BlobRefs...))
		if err != nil {
			return err
		}
		if _, err := s.in(ctx, tx, sqlRebase).ExecContext(ctx, thread, rb.ID, string(rb.State), blobs); err != nil {
			return err
		}
	}
	return nil
}

// pruneFound lists which of the ids (a JSON array) are checkpoints of the
// thread, ascending.
func (s *Store) pruneFound(ctx context.Context, tx *sql.Tx, thread string, list []byte, n int) ([]int64, error) {
	rows, err := s.in(ctx, tx, sqlPruneFound).QueryContext(ctx, thread, list)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := make([]int64, 0, n)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		found = append(found, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Sort(found)
	return found, nil
}

func (s *Store) CreateDraft(ctx context.Context, d store.Draft) (_ store.Draft, created bool, err error) {
	defer s.wrap(ctx, &err, "create draft %v of thread %v", check.Name(d.OperationID), check.Name(d.ThreadID))
	if err := check.Draft(d); err != nil {
		return store.Draft{}, false, err
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return store.Draft{}, false, err
	}
	defer tx.Rollback()
	// The write transaction (BEGIN IMMEDIATE) holds the only write lock:
	// the row read is the one there, or the one inserted now.
	stored := store.Draft{ThreadID: d.ThreadID, OperationID: d.OperationID}
	var createdAt int64
	err = s.in(ctx, tx, sqlDraft).QueryRowContext(ctx, d.ThreadID, d.OperationID).Scan(&stored.Body, &createdAt)
	switch {
	case err == nil:
		stored.CreatedAt = micros(createdAt)
		return stored, false, tx.Commit()
	case !errors.Is(err, sql.ErrNoRows):
		return store.Draft{}, false, err
	}
	// Only a new row is fenced: an existing draft is returned above.
	if err := s.fence(ctx, tx, d.ThreadID, d.Epoch); err != nil {
		return store.Draft{}, false, err
	}
	createdAt = time.Now().UnixMicro()
	if _, err := s.in(ctx, tx, sqlPutDraft).ExecContext(ctx, d.ThreadID, d.OperationID, string(d.Body), createdAt); err != nil {
		return store.Draft{}, false, err
	}
	if err := s.in(ctx, tx, sqlDraft).QueryRowContext(ctx, d.ThreadID, d.OperationID).Scan(&stored.Body, &createdAt); err != nil {
		return store.Draft{}, false, err
	}
	stored.CreatedAt = micros(createdAt)
	if err := tx.Commit(); err != nil {
		return store.Draft{}, false, err
	}
	return stored, true, nil
}

func (s *Store) Draft(ctx context.Context, thread, operationID string) (_ store.Draft, err error) {
	defer s.wrap(ctx, &err, "get draft %v of thread %v", check.Name(operationID), check.Name(thread))
	d := store.Draft{ThreadID: thread, OperationID: operationID}
	var created int64
	err = s.r.stmts[sqlDraft].QueryRowContext(ctx, thread, operationID).Scan(&d.Body, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Draft{}, store.ErrNotFound
	}
	if err != nil {
		return store.Draft{}, err
	}
	d.CreatedAt = micros(created)
	return d, nil
}

func (s *Store) ListDrafts(ctx context.Context, thread string) (_ []store.Draft, err error) {
	defer s.wrap(ctx, &err, "list drafts of thread %v", check.Name(thread))
	rows, err := s.r.stmts[sqlDrafts].QueryContext(ctx, thread)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Draft
	for rows.Next() {
		d := store.Draft{ThreadID: thread}
		var created int64
		if err := rows.Scan(&d.OperationID, &d.Body, &created); err != nil {
			return nil, err
		}
		d.CreatedAt = micros(created)
		out = append(out, d)
	}
	return out, rows.Err()
}

func (s *Store) Close() error {
	if s.unwiped.Load() && s.w.DB != nil {
		s.wipeWAL(context.Background())
	}
	var errs []error
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
