package langgraph

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"rewind/store/internal/check"
)

// SQLite: LangGraph's SqliteSaver (Python and JS write the same DDL)
// keeps checkpoints(thread_id, checkpoint_ns, checkpoint_id,
// parent_checkpoint_id, type, checkpoint, metadata) and writes(thread_id,
// checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value).
var (
	sqliteCheckpointCols = []string{"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint", "metadata"}
	sqliteWriteCols      = []string{"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "value"}
)

// sqliteURI opens a file read-only and leaves nothing beside it. A
// database in rollback mode, or in WAL mode with a writer's -wal and -shm
// beside it, opens with mode=ro: it reads the commits waiting in the WAL
// (a LangGraph app may be writing). A WAL database whose writer has closed
// has neither file, and mode=ro would make them, owned by this user and
// left behind (a writer of another user could no longer use them): then
// the file is whole and opens immutable. query_only refuses writes on the
// connection too; reads are memory-mapped, which halves the cost of
// listing a long thread (every checkpoint holds all its values).
func sqliteURI(path, mode string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	// A URI, so that '?', '#' and '%' in the path stay part of the name.
	return "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + mode + "&_pragma=query_only(1)&_pragma=busy_timeout(5000)&_pragma=mmap_size(268435456)", nil
}

// Open modes (see sqliteURI).
const (
	modeRO        = "mode=ro"
	modeImmutable = "immutable=1"
)

// openMode picks the mode for the file as it is now.
func openMode(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return modeRO
	}
	defer f.Close()
	var header [20]byte
	if _, err := io.ReadFull(f, header[:]); err != nil || header[18] != 2 { // 2: WAL
		return modeRO
	}
	if exists(path+"-wal") && exists(path+"-shm") {
		return modeRO
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return modeRO // commits wait in it: read them, even if that makes a -shm
	}
	return modeImmutable
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// detectSQLite is Detect of a file; keep keeps the handle it read a
// LangGraph file on in the Detected (DetectKeeping).
func detectSQLite(ctx context.Context, path string, keep bool) (Detected, error) {
	d := Detected{Kind: KindRewind, Backend: "sqlite", Where: path}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.why = "does not exist" // rewind's opener makes a new store there
		return d, nil
	case err != nil:
		return d, fmt.Errorf("open %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return d, fmt.Errorf("open %s: not a regular file; name a database file", path)
	case fi.Size() == 0:
		d.why = "is an empty file"
		return d, nil
	}
	if v, ok := rawRewindVersion(path); ok { // no SQLite schema parse: the store's opener parses it
		d.why, d.Rewind = "is a rewind store", v
		return d, nil
	}
	mode := openMode(path)
	db, err := openIn(path, mode)
	if err != nil {
		return d, err
	}
	defer func() {
		if d.kept == nil {
			db.Close()
		}
	}()
	tables, err := sqliteTables(ctx, db, path)
	if err != nil {
		return d, err
	}
	switch {
	case slices.Contains(tables, "rewind_store_schema"):
		d.why = "is a rewind store"
		if err := db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM rewind_store_schema`).Scan(&d.Rewind); err != nil || d.Rewind <= 0 {
			d.Rewind, d.why = -1, fmt.Sprintf("is a rewind store whose schema version does not read (%v)", orNone(err))
		}
		return d, nil
	case len(tables) == 0:
		d.why = "holds no tables"
		return d, nil
	}
	if !slices.Contains(tables, "checkpoints") || !slices.Contains(tables, "writes") {
		return d, neither(fmt.Sprintf("%s is a SQLite database with neither a rewind store nor LangGraph's checkpoint tables (checkpoints and writes): it has %s; name a rewind store or a LangGraph SqliteSaver file",
			path, list(tables)))
	}
	if err := sqliteColumns(ctx, db, path); err != nil {
		return d, err
	}
	d.Kind, d.Schema = KindLangGraph, "LangGraph SqliteSaver tables checkpoints and writes"
	if keep {
		d.kept = &keptDB{db: db, mode: mode}
	}
	return d, nil
}

func openIn(path, mode string) (*sql.DB, error) {
	uri, err := sqliteURI(path, mode)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, fmt.Errorf("open %s read-only: %w", path, err)
	}
	return db, nil
}

func sqliteTables(ctx context.Context, db *sql.DB, path string) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
	if err != nil {
		var se *sqlite.Error
		if errors.As(err, &se) && se.Code() == sqlite3.SQLITE_NOTADB {
			return nil, neither(fmt.Sprintf("%s is not a SQLite database; name a rewind store or a LangGraph SqliteSaver file", path))
		}
		if errors.As(err, &se) {
			// Even a read of a WAL database writes its index: a full
			// disk shows here first, for every command.
			err = check.DiskFull(path, se.Code(), err)
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		out = append(out, name)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// sqliteColumnNames lists table's columns.
func sqliteColumnNames(ctx context.Context, db *sql.DB, table string) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var have []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		have = append(have, name)
	}
	return have, rows.Err()
}

// sqliteColumns checks LangGraph's columns, so an older layout or a
// look-alike table is named rather than misread.
func sqliteColumns(ctx context.Context, db *sql.DB, path string) error {
	for _, table := range []string{"checkpoints", "writes"} {
		want := sqliteCheckpointCols
		if table == "writes" {
			want = sqliteWriteCols
		}
		have, err := sqliteColumnNames(ctx, db, table)
		if err != nil {
			return fmt.Errorf("read the columns of %s in %s: %w", table, path, err)
		}
		if missing := without(want, have); len(missing) > 0 {
			why := "a table named like LangGraph's but with other columns"
			if slices.Contains(have, "thread_ts") {
				why = "the layout of LangGraph before 0.2 (thread_ts), which this reader does not read"
			}
			return neither(fmt.Sprintf("%s is neither a rewind store nor a LangGraph database: table %s lacks %s: %s; name a rewind store or a LangGraph SqliteSaver file", path, table, list(missing), why))
		}
	}
	return nil
}

func without(want, have []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(have, w) {
			out = append(out, w)
		}
	}
	return out
}

func list(names []string) string {
	if len(names) > 8 {
		return strings.Join(names[:8], ", ") + fmt.Sprintf(" and %d more", len(names)-8)
	}
	return strings.Join(names, ", ")
}

// sqliteDB is an open LangGraph SQLite file.
type sqliteDB struct {
	d Detected
	// order sorts a checkpoint's writes as they were stored: by rowid,
	// unless the table has none.
	order string

	mu     sync.Mutex
	db     *sql.DB
	mode   string
	old    []*sql.DB
	idle   []*readConn // of db: connections between snapshots, their statements kept
	closed bool        // by close: a snapshot that ends later closes its connection
}

// readConn is a connection a snapshot reads on, with the statements
// prepared on it. SQLite parses a statement again at each unprepared
// query, and a read asks the same few again and again (a delta channel's
// rebuild: a page of listings and the writes for each channel): parsing
// was an eighth of the reader's CPU in its tests. The statements live as
// long as the connection.
type readConn struct {
	db    *sql.DB
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// maxIdleReads is how many read connections a source keeps between
// snapshots.
const maxIdleReads = 2

// prepare makes sure q is prepared on the connection.
func (c *readConn) prepare(ctx context.Context, q string) error {
	if c.stmts[q] != nil {
		return nil
	}
	st, err := c.conn.PrepareContext(ctx, q)
	if err != nil {
		return err
	}
	c.stmts[q] = st
	return nil
}

// prepared is q's statement, once prepare made it (the connection's: it
// closes them).
func (c *readConn) prepared(q string) *sql.Stmt { return c.stmts[q] }

func (c *readConn) close() error {
	var err error
	for _, st := range c.stmts {
		err = errors.Join(err, st.Close())
	}
	return errors.Join(err, c.conn.Close())
}

// take is an idle read connection of the file's pool as it is now, or a
// new one.
func (s *sqliteDB) take(ctx context.Context) (*readConn, error) {
	db, err := s.handle()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	var stale []*readConn
	var got *readConn
	for len(s.idle) > 0 && got == nil {
		c := s.idle[len(s.idle)-1]
		s.idle = s.idle[:len(s.idle)-1]
		if c.db == db {
			got = c
		} else {
			stale = append(stale, c) // of a pool a mode change left
		}
	}
	s.mu.Unlock()
	for _, c := range stale {
		_ = c.close()
	}
	if got != nil {
		return got, nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &readConn{db: db, conn: conn, stmts: map[string]*sql.Stmt{}}, nil
}

// give returns a connection whose snapshot ended clean, for the next.
func (s *sqliteDB) give(c *readConn) {
	s.mu.Lock()
	if !s.closed && c.db == s.db && len(s.idle) < maxIdleReads {
		s.idle = append(s.idle, c)
		c = nil
	}
	s.mu.Unlock()
	if c != nil {
		_ = c.close()
	}
}

func openSQLite(ctx context.Context, d Detected) (*sqliteDB, error) {
	db, mode := d.kept.take() // the detection's, when it kept it
	if db == nil {
		mode = openMode(d.Where)
		var err error
		if db, err = openIn(d.Where, mode); err != nil {
			return nil, err
		}
	}
	d.kept = nil
	s := &sqliteDB{db: db, d: d, mode: mode, order: "rowid"}
	if _, err := db.ExecContext(ctx, `SELECT rowid FROM writes LIMIT 0`); err != nil {
		s.order = "task_id, idx"
	}
	return s, nil
}

func (s *sqliteDB) about() About {
	return About{Kind: KindLangGraph, Backend: "sqlite", Where: s.d.Where, Schema: s.d.Schema, ReadOnly: true}
}

func (s *sqliteDB) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	for _, c := range s.idle {
		err = errors.Join(err, c.close())
	}
	s.idle, s.closed = nil, true
	err = errors.Join(err, s.db.Close())
	for _, db := range s.old {
		err = errors.Join(err, db.Close())
	}
	return err
}

// handle is the pool for the file as it is now: a writer that starts
// after an immutable open makes a WAL, which only a mode=ro connection
// reads, so the mode is checked again before each read.
func (s *sqliteDB) handle() (*sql.DB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if mode := openMode(s.d.Where); mode != s.mode {
		db, err := openIn(s.d.Where, mode)
		if err != nil {
			return nil, err
		}
		s.old = append(s.old, s.db) // reads may still use it; closed with the source
		s.db, s.mode = db, mode
	}
	return s.db, nil
}

func (s *sqliteDB) snapshot(ctx context.Context) (snapshot, error) {
	c, err := s.take(ctx)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.d.Where, err)
	}
	// BEGIN on the connection itself (not BeginTx): a statement prepared
	// on a Conn is prepared again in each of its Tx's.
	if _, err := c.conn.ExecContext(ctx, "BEGIN"); err != nil {
		_ = c.close()
		return nil, fmt.Errorf("read %s: %w", s.d.Where, err)
	}
	return &sqliteSnap{c: c, db: s, order: s.order}, nil
}

type sqliteSnap struct {
	c     *readConn
	db    *sqliteDB
	order string
}

// done ends the read; its connection goes back to the source unless the
// rollback failed (a cancelled read can leave it so).
func (s *sqliteSnap) done() {
	if _, err := s.c.conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		_ = s.c.close()
		return
	}
	s.db.give(s.c)
}

func (s *sqliteSnap) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if err := s.c.prepare(ctx, q); err != nil {
		return nil, err
	}
	return s.c.prepared(q).QueryContext(ctx, args...)
}

func (s *sqliteSnap) queryRow(ctx context.Context, q string, args []any, dst ...any) error {
	if err := s.c.prepare(ctx, q); err != nil {
		return err
	}
	return s.c.prepared(q).QueryRowContext(ctx, args...).Scan(dst...)
}

func (s *sqliteSnap) namespaces(ctx context.Context, thread string, one bool) ([]nsRow, error) {
	where, args := "", []any(nil)
	if one {
		where, args = "WHERE thread_id = ?", []any{thread}
	}
	rows, err := s.query(ctx, `
		SELECT g.thread_id, g.checkpoint_ns, g.n, g.latest, c.metadata
		FROM (SELECT thread_id, checkpoint_ns, count(*) AS n, max(checkpoint_id) AS latest, min(checkpoint_id) AS first
		      FROM checkpoints `+where+` GROUP BY thread_id, checkpoint_ns) g
		JOIN checkpoints c ON c.thread_id = g.thread_id AND c.checkpoint_ns = g.checkpoint_ns AND c.checkpoint_id = g.first`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []nsRow
	for rows.Next() {
		var r nsRow
		if err := rows.Scan(&r.thread, &r.ns, &r.checkpoints, &r.latest, &r.firstMeta); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *sqliteSnap) hasID(ctx context.Context, c Chain, id string) (bool, error) {
	var got string
	err := s.queryRow(ctx, `SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`, []any{c.Thread, c.NS, id}, &got)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return got == id, err // byte for byte, whatever the column's collation
}

func (s *sqliteSnap) newest(ctx context.Context, c Chain) (string, error) {
	var id string
	err := s.queryRow(ctx, `SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?
		ORDER BY checkpoint_id DESC LIMIT 1`, []any{c.Thread, c.NS}, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

func (s *sqliteSnap) taskCheckpoint(ctx context.Context, c Chain, task string) (string, error) {
	var id string
	err := s.queryRow(ctx, `SELECT checkpoint_id FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND task_id = ?
		ORDER BY checkpoint_id LIMIT 1`, []any{c.Thread, c.NS, task}, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

func (s *sqliteSnap) checkpoints(ctx context.Context, c Chain, q rowQuery) ([]row, error) {
	md := "metadata"
	if q.lean {
		md = "NULL"
	}
	query := `SELECT checkpoint_id, coalesce(parent_checkpoint_id, ''), coalesce(type, ''), checkpoint, ` + md + `
		FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?`
	args := []any{c.Thread, c.NS}
	switch {
	case q.id != "":
		query += ` AND checkpoint_id = ?`
		args = append(args, q.id)
	case q.before != "":
		query += ` AND checkpoint_id < ?`
		args = append(args, q.before)
	}
	query += ` ORDER BY checkpoint_id DESC`
	if q.limit > 0 {
		query += ` LIMIT ?`
		args = append(args, q.limit)
	}
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []row
	for rows.Next() {
		var r row
		var typ string
		var cp, md sql.RawBytes // decoded before the next row: no copy
		if err := rows.Scan(&r.id, &r.parent, &typ, &cp, &md); err != nil {
			return nil, err
		}
		if q.lean {
			r.doc = readLeanDoc(typ, cp)
		} else {
			r.doc, r.meta = readDoc(typ, cp, q.full), readMeta(md)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *sqliteSnap) parents(ctx context.Context, c Chain) (map[string]string, error) {
	rows, err := s.query(ctx, `SELECT checkpoint_id, coalesce(parent_checkpoint_id, '')
		FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?`, c.Thread, c.NS)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, parent string
		if err := rows.Scan(&id, &parent); err != nil {
			return nil, err
		}
		out[id] = parent
	}
	return out, rows.Err()
}

func (s *sqliteSnap) writes(ctx context.Context, c Chain, from, to string, values bool) ([]writeRow, error) {
	value := `CASE WHEN channel = '` + chanTasks + `' THEN value END`
	if values {
		value = `value`
	}
	return s.readWrites(ctx, `SELECT checkpoint_id, task_id, idx, channel, coalesce(type, ''), `+value+`
		FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id BETWEEN ? AND ?
		ORDER BY checkpoint_id, `+s.order, c.Thread, c.NS, from, to)
}

// channelWrites compares the channel as text: a name stored as a blob
// scans as the same string.
func (s *sqliteSnap) channelWrites(ctx context.Context, c Chain, ch, from, to string) ([]writeRow, error) {
	return s.readWrites(ctx, `SELECT checkpoint_id, task_id, idx, channel, coalesce(type, ''), value
		FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id BETWEEN ? AND ? AND CAST(channel AS TEXT) = ?
		ORDER BY checkpoint_id, `+s.order, c.Thread, c.NS, from, to, ch)
}

// readWrites reads the rows of a query of writes.
func (s *sqliteSnap) readWrites(ctx context.Context, q string, args ...any) ([]writeRow, error) {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []writeRow
	for rows.Next() {
		var w writeRow
		if err := rows.Scan(&w.checkpoint, &w.task, &w.idx, &w.channel, &w.typ, &w.value); err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// firstWrites lists the channels chain c's writes name: SqliteSaver keeps
// a checkpoint's values in one document, so a channel with a value got it
// from a write.
func (s *sqliteSnap) firstWrites(ctx context.Context, c Chain) ([]string, error) {
	rows, err := s.query(ctx, `SELECT DISTINCT channel FROM writes WHERE thread_id = ? AND checkpoint_ns = ?`, c.Thread, c.NS)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ch string
		if err := rows.Scan(&ch); err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, rows.Err()
}
