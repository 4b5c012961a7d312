package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// The schema: its version, the migrations that build and upgrade it, and
// the checks Open makes before it writes to a file (a SQLite database,
// rewind's, not from a newer rewind).

// schemaVersion is the newest store schema this binary knows.
const schemaVersion = 15

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
	// 7: the tables every checkpoint writes become WITHOUT ROWID: a row
	// lives in its primary key's b-tree, so a put touches one b-tree per
	// table instead of two (the table and its key's index), and a chain's
	// rows are read in key order without a lookup each.
	`CREATE TABLE graph_checkpoints_v7 (
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
	) WITHOUT ROWID;
	INSERT INTO graph_checkpoints_v7 SELECT thread_id, checkpoint_id, parent_id, rerooted_from, base, created_at, meta, blob_refs, state, rebased
		FROM graph_checkpoints;
	DROP TABLE graph_checkpoints;
	ALTER TABLE graph_checkpoints_v7 RENAME TO graph_checkpoints;
	CREATE TABLE graph_events_v7 (
		thread_id     TEXT    NOT NULL,
		checkpoint_id INTEGER NOT NULL,
		seq           INTEGER NOT NULL,
		type          TEXT    NOT NULL,
		payload       TEXT    NOT NULL,
		created_at    INTEGER NOT NULL,
		PRIMARY KEY (thread_id, checkpoint_id, seq),
		FOREIGN KEY (thread_id, checkpoint_id) REFERENCES graph_checkpoints (thread_id, checkpoint_id)
	) WITHOUT ROWID;
	INSERT INTO graph_events_v7 SELECT thread_id, checkpoint_id, seq, type, payload, created_at FROM graph_events;
	DROP TABLE graph_events;
	ALTER TABLE graph_events_v7 RENAME TO graph_events;
	CREATE TABLE graph_messages_v7 (
		thread_id     TEXT    NOT NULL,
		hash          TEXT    NOT NULL,
		idx           INTEGER NOT NULL,
		body          TEXT    NOT NULL, -- JSON, verbatim
		checkpoint_id INTEGER NOT NULL, -- the put that stored it first
		created_at    INTEGER NOT NULL, -- unix microseconds
		PRIMARY KEY (thread_id, hash)
	) WITHOUT ROWID;
	INSERT INTO graph_messages_v7 SELECT thread_id, hash, idx, body, checkpoint_id, created_at FROM graph_messages;
	DROP TABLE graph_messages;
	ALTER TABLE graph_messages_v7 RENAME TO graph_messages;
	CREATE INDEX graph_messages_idx ON graph_messages (thread_id, idx);`,
	// 8: the head snapshot (store.Checkpoint.Head), one a thread: a cache
	// of the newest state, so no foreign key (it goes with its thread in
	// DeleteThread, and with any prune).
	`CREATE TABLE graph_heads (
		thread_id     TEXT    NOT NULL PRIMARY KEY,
		checkpoint_id INTEGER NOT NULL,
		doc           TEXT    NOT NULL -- the engine's JSON document, verbatim
	) WITHOUT ROWID;`,
	// 9: messages clustered by index. graph_messages, keyed by hash, put
	// each new message in a random leaf (and its graph_messages_idx entry
	// in another): 3.8 of a turn's 7.3 WAL frames a commit. The bodies now
	// follow their thread's order (graph_message_bodies), so a put's new
	// ones go together at the end of its rows, and graph_message_keys
	// finds a hash's row. Triggers keep the keys: a put inserts into the
	// bodies alone (one statement), and a hash the thread holds already
	// keeps its first row, as graph_messages' key kept it.
	`CREATE TABLE graph_message_keys (
		thread_id TEXT    NOT NULL,
		hash      TEXT    NOT NULL,
		idx       INTEGER NOT NULL, -- of its row in graph_message_bodies
		PRIMARY KEY (thread_id, hash)
	) WITHOUT ROWID;
	CREATE TABLE graph_message_bodies (
		thread_id     TEXT    NOT NULL,
		idx           INTEGER NOT NULL,
		hash          TEXT    NOT NULL,
		checkpoint_id INTEGER NOT NULL, -- the put that stored it first
		created_at    INTEGER NOT NULL, -- unix microseconds
		body          TEXT    NOT NULL, -- JSON, verbatim
		PRIMARY KEY (thread_id, idx, hash)
	) WITHOUT ROWID;
	INSERT INTO graph_message_keys SELECT thread_id, hash, idx FROM graph_messages;
	INSERT INTO graph_message_bodies SELECT thread_id, idx, hash, checkpoint_id, created_at, body FROM graph_messages;
	DROP TABLE graph_messages;
	CREATE TRIGGER graph_message_first BEFORE INSERT ON graph_message_bodies
		WHEN EXISTS (SELECT 1 FROM graph_message_keys WHERE thread_id = new.thread_id AND hash = new.hash)
		BEGIN SELECT RAISE(IGNORE); END;
	CREATE TRIGGER graph_message_key AFTER INSERT ON graph_message_bodies
		BEGIN INSERT INTO graph_message_keys (thread_id, hash, idx) VALUES (new.thread_id, new.hash, new.idx); END;`,
	// 10: full-text search (Store.Search). graph_message_words is an FTS5
	// index of every message's words and of the word that names its
	// thread (rewind_words(thread_id, body): threadWord, then
	// store.BodyWords, the one tokenizer of every store), so that a search
	// or a delete finds the thread's rows through the index. The thread's
	// word begins with "_", a token character here that no query word
	// holds: no query word begins it. Contentless and detail=none: the
	// text is not stored twice, nor any word's positions (a search asks
	// for words, never phrases), only the message's (idx, hash), by which
	// a hit joins graph_message_bodies. A trigger keeps it in the put's
	// transaction; secure-delete leaves no word of a deleted thread in the
	// index's pages. The messages stored before are indexed here.
	`CREATE VIRTUAL TABLE graph_message_words USING fts5 (
		idx UNINDEXED, hash UNINDEXED, words,
		content = '', contentless_delete = 1, contentless_unindexed = 1, detail = none,
		tokenize = "unicode61 remove_diacritics 0 tokenchars '_'"
	);
	INSERT INTO graph_message_words (graph_message_words, rank) VALUES ('secure-delete', 1);
	CREATE TRIGGER graph_message_index AFTER INSERT ON graph_message_bodies
		BEGIN INSERT INTO graph_message_words (idx, hash, words)
			VALUES (new.idx, new.hash, rewind_words(new.thread_id, new.body)); END;
	INSERT INTO graph_message_words (idx, hash, words)
		SELECT idx, hash, rewind_words(thread_id, body) FROM graph_message_bodies;`,
	// 11: a row a thread with what Threads lists, kept by the statements
	// that add and delete checkpoints (a put, Prune, DeleteThread) in
	// their transactions: counting the checkpoints at every listing read
	// every row of graph_checkpoints (0.14 s and 95 MB for a 5,000-turn
	// thread). updated_at is the newest checkpoint's created_at (SQLite
	// takes a bare column from the max() row).
	`CREATE TABLE graph_threads (
		thread_id   TEXT    NOT NULL PRIMARY KEY,
		checkpoints INTEGER NOT NULL,
		latest_id   INTEGER NOT NULL,
		updated_at  INTEGER NOT NULL -- unix microseconds
	) WITHOUT ROWID;
	INSERT INTO graph_threads (thread_id, checkpoints, latest_id, updated_at)
		SELECT thread_id, count(*), max(checkpoint_id), created_at FROM graph_checkpoints GROUP BY thread_id;`,
	// 12: tenants (store.Tenancy). The tenants the store knows, and the
	// owner of every thread a tenant other than the default claimed: a
	// thread without a row here is the default tenant's, so the rows of
	// the stores before are the default tenant's as they stand, and a
	// default tenant's put writes nothing more.
	`CREATE TABLE graph_tenants (
		name TEXT NOT NULL PRIMARY KEY
	) WITHOUT ROWID;
	CREATE TABLE graph_thread_tenants (
		thread_id TEXT NOT NULL PRIMARY KEY,
		tenant    TEXT NOT NULL
	) WITHOUT ROWID;`,
	// 13: the newest listing in the thread's row, so Threads reads one
	// small table: joining each thread to its newest checkpoint read a
	// page of graph_checkpoints a thread (57% of `rewind threads` at
	// 1,001 threads). A put writes it (sqlPutThread); the trigger keeps
	// it when a statement changes the newest row (Prune re-roots and
	// rebases it, a reseal rewrites a state). latest_state is the state
	// of a newest row without meta only, as History lists it.
	`ALTER TABLE graph_threads ADD COLUMN latest_parent INTEGER;
	ALTER TABLE graph_threads ADD COLUMN latest_rerooted_from INTEGER;
	ALTER TABLE graph_threads ADD COLUMN latest_base INTEGER;
	ALTER TABLE graph_threads ADD COLUMN latest_meta TEXT;
	ALTER TABLE graph_threads ADD COLUMN latest_blob_refs TEXT;
	ALTER TABLE graph_threads ADD COLUMN latest_state TEXT;
	UPDATE graph_threads SET (latest_parent, latest_rerooted_from, latest_base, latest_meta, latest_blob_refs, latest_state) =
		(SELECT parent_id, rerooted_from, base, meta, blob_refs, CASE WHEN meta IS NULL THEN state END
		FROM graph_checkpoints c WHERE c.thread_id = graph_threads.thread_id AND c.checkpoint_id = graph_threads.latest_id);
	CREATE TRIGGER graph_threads_latest AFTER UPDATE OF parent_id, rerooted_from, base, meta, blob_refs, state ON graph_checkpoints
		BEGIN UPDATE graph_threads SET latest_parent = new.parent_id, latest_rerooted_from = new.rerooted_from, latest_base = new.base,
			latest_meta = new.meta, latest_blob_refs = new.blob_refs, latest_state = CASE WHEN new.meta IS NULL THEN new.state END
		WHERE thread_id = new.thread_id AND latest_id = new.checkpoint_id; END;`,
	// 14: RecentThreads' order (updated_at, then thread_id, descending):
	// a page of threads and the count of the rest read this index, not
	// every row sorted (store.ThreadCursor).
	`CREATE INDEX graph_threads_updated ON graph_threads (updated_at, thread_id);`,
	// 15: Size as a running total (graph_sizes), counted once here from
	// the rows and kept by triggers in every write's transaction: Size
	// read every row of the thread (a 5,000-turn bench spent 85% of its
	// time in it after each turn).
	sizeMigration(),
}

// sizedTables are the tables Size counts, each with the bytes of one row
// of it as R (new, old, or the table itself): store.Store.Size's rule,
// memory.Store's, the thread id and 8 for each number and time.
var sizedTables = []struct{ table, key, bytes string }{
	{"graph_checkpoints", "checkpoint", `octet_length(R.thread_id) + 5*8 + coalesce(octet_length(R.meta), 0) + octet_length(R.state) + coalesce(octet_length(R.rebased), 0) +
		coalesce((SELECT sum(octet_length(value)) FROM json_each(R.blob_refs)), 0)`},
	{"graph_writes", "writes", `octet_length(R.thread_id) + 2*8 + octet_length(R.task_id) + octet_length(R.writes)`},
	{"graph_events", "event", `octet_length(R.thread_id) + 3*8 + octet_length(R.type) + octet_length(R.payload)`},
	{"graph_message_bodies", "message", `octet_length(R.thread_id) + 3*8 + octet_length(R.hash) + octet_length(R.body)`},
	{"graph_blobs", "blob", `octet_length(R.thread_id) + 8 + octet_length(R.hash) + octet_length(R.body)`},
	{"graph_drafts", "draft", `octet_length(R.thread_id) + 8 + octet_length(R.operation_id) + octet_length(R.body)`},
	{"graph_epochs", "epoch", `octet_length(R.thread_id) + 2*8`},
	{"graph_heads", "head", `octet_length(R.thread_id) + 8 + octet_length(R.doc)`},
}

// sizeMigration is migrations[14]: the table, its rows counted from every
// sized table, and three triggers a table. A thread's row goes in
// DeleteThread (sqlDeleteSize).
func sizeMigration() string {
	var b strings.Builder
	b.WriteString(`CREATE TABLE graph_sizes (
		thread_id TEXT    NOT NULL PRIMARY KEY,
		bytes     INTEGER NOT NULL -- store.Store.Size
	) WITHOUT ROWID;
	INSERT INTO graph_sizes (thread_id, bytes) SELECT thread_id, sum(n) FROM (`)
	for i, t := range sizedTables {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&b, "\n\t\tSELECT R.thread_id, %s AS n FROM %s R", t.bytes, t.table)
	}
	b.WriteString(")\n\tGROUP BY thread_id;")
	for _, t := range sizedTables {
		row := func(r string) string { return "(" + strings.ReplaceAll(t.bytes, "R.", r+".") + ")" }
		fmt.Fprintf(&b, `
	CREATE TRIGGER graph_size_%[1]s_in AFTER INSERT ON %[2]s BEGIN INSERT INTO graph_sizes (thread_id, bytes) VALUES (new.thread_id, %[3]s)
		ON CONFLICT (thread_id) DO UPDATE SET bytes = bytes + excluded.bytes; END;
	CREATE TRIGGER graph_size_%[1]s_out AFTER DELETE ON %[2]s BEGIN UPDATE graph_sizes SET bytes = bytes - %[4]s WHERE thread_id = old.thread_id; END;
	CREATE TRIGGER graph_size_%[1]s_up AFTER UPDATE ON %[2]s BEGIN UPDATE graph_sizes SET bytes = bytes + %[3]s - %[4]s WHERE thread_id = new.thread_id; END;`,
			t.key, t.table, row("new"), row("old"))
	}
	return b.String()
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

// inspect checks the file through db, the readers' pool (query_only, no
// journal_mode), before anything (such as switching it to WAL) can change
// it, and returns its store schema version (0: a new file).
func inspect(ctx context.Context, path string, db *sql.DB) (int, error) {
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
	var tables, ours int
	err = db.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE name = 'rewind_store_schema')
		FROM sqlite_schema WHERE type = 'table'`).Scan(&tables, &ours)
	if code(err) == sqlite3.SQLITE_NOTADB {
		return 0, fmt.Errorf("open sqlite store %s: the file is not a SQLite database; rewind left it untouched; name a new file or move this one away", path)
	}
	if err != nil {
		return 0, fmt.Errorf("open sqlite store %s: read it: %w%s", path, full(path, err), hint(err))
	}
	if ours == 0 {
		if tables > 0 {
			return 0, fmt.Errorf("open sqlite store %s: a SQLite database, but not a rewind store (it has no rewind_store_schema table); rewind left it untouched; name a new file", path)
		}
		return 0, nil
	}
	var v int
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM rewind_store_schema`).Scan(&v); err != nil {
		return 0, fmt.Errorf("open sqlite store %s: read its schema version: %w%s", path, full(path, err), hint(err))
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

// migrateWaiting is migrate, again while another process holds the file:
// two processes opening a new file at once both switch it to WAL, and
// SQLite refuses one at once (SQLITE_BUSY, no busy wait: each holds the
// read lock the other's switch needs). `rewind run` and `rewind tui`
// started together on a new store failed so, one time in a hundred.
func (s *Store) migrateWaiting(ctx context.Context) error {
	for deadline := time.Now().Add(busyWait); ; {
		err := s.migrate(ctx)
		if code(err) != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(5+rand.IntN(20)) * time.Millisecond):
		}
	}
}

// migrate creates or upgrades the tables, in one transaction so that two
// processes opening a new file at once do not both create them.
func (s *Store) migrate(ctx context.Context) (err error) {
	defer func() {
		if err != nil && !errors.Is(err, errNewer) {
			err = fmt.Errorf("open sqlite store %s: create or upgrade its tables: %w%s", s.path, full(s.path, err), hint(err))
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
	v, err = createNewest(ctx, tx, v)
	if err != nil {
		return err
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

// freshRows are the rows the migrations leave in a new file: the epoch
// counter's one row (6) and the search index's secure-delete (10).
const freshRows = `INSERT INTO graph_epoch_counter (issued) VALUES (0);
INSERT INTO graph_message_words (graph_message_words, rank) VALUES ('secure-delete', 1);`

// createNewest gives a new file (schema 0 and nothing but the
// rewind_store_schema table upgrade just made) the newest schema in one
// script, freshSchema, rather than every migration in turn: most of a
// first run's work, and of every test's new file. Any other file goes on
// through the migrations from v, refused there as before if it holds
// tables of its own.
func createNewest(ctx context.Context, tx *sql.Tx, v int) (int, error) {
	if v != 0 {
		return v, nil
	}
	var others int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name <> 'rewind_store_schema'`).Scan(&others); err != nil {
		return 0, err
	}
	if others > 0 {
		return 0, nil
	}
	if _, err := tx.ExecContext(ctx, freshSchema+";\n"+freshRows); err != nil {
		return 0, fmt.Errorf("schema %d for a new file: %w", schemaVersion, err)
	}
	return schemaVersion, nil
}
