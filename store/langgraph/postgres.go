package langgraph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PostgreSQL: LangGraph's PostgresSaver keeps checkpoints (the checkpoint
// as jsonb, primitives inline), checkpoint_blobs (every other channel
// value, by channel and version), checkpoint_writes and
// checkpoint_migrations (one row per migration applied: Python's 0–9 add
// task_path to the writes at 9; LangGraph.js has 0–4).
var (
	pgCheckpointCols = []string{"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "checkpoint", "metadata"}
	pgBlobCols       = []string{"thread_id", "checkpoint_ns", "channel", "version", "type", "blob"}
	pgWriteCols      = []string{"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "blob"}
	// ShallowPostgresSaver's: one row per thread and namespace, the
	// checkpoint's id inside its document; one blob per channel.
	pgShallowCheckpointCols = []string{"thread_id", "checkpoint_ns", "checkpoint", "metadata"}
	pgShallowBlobCols       = []string{"thread_id", "checkpoint_ns", "channel", "type", "blob"}
)

// pgConfig connects read-only: every transaction of the session is read
// only, whatever a query says (a snapshot's BEGIN says so too, pgBegin).
func pgConfig(url string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgconn masks the password in its message.
		return nil, fmt.Errorf("bad PostgreSQL URL (want postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE): %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout <= 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	cfg.ConnConfig.RuntimeParams["application_name"] = "rewind (LangGraph reader)"
	return cfg, nil
}

func pgConnect(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgConfig(url)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		err = pool.Ping(ctx)
		if err != nil {
			pool.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w; check that the server runs and the URL's user, password and database", redact(url), unreachable{err})
	}
	return pool, nil
}

// unreachable is a failed connect: it matches ErrUnreachable and says
// only the driver's words.
type unreachable struct{ err error }

func (u unreachable) Error() string        { return u.err.Error() }
func (u unreachable) Unwrap() error        { return u.err }
func (u unreachable) Is(target error) bool { return target == ErrUnreachable }

func detectPostgres(ctx context.Context, url string) (Detected, error) {
	pool, err := pgConnect(ctx, url)
	if err != nil {
		return Detected{Kind: KindRewind, Backend: "postgres", Where: redact(url), url: url}, err
	}
	defer pool.Close()
	return detectPostgresOn(ctx, url, pool)
}

// Querier is a PostgreSQL connection (a *pgxpool.Pool) that Detect's
// reads run on.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// DetectPostgres is Detect of a postgres:// spec on a connection the
// caller made (rewind's store's, which then opens on it: one connection
// a command, not two). It only reads the catalog and rewind's version
// table.
func DetectPostgres(ctx context.Context, spec string, q Querier) (Detected, error) {
	return detectPostgresOn(ctx, spec, q)
}

func detectPostgresOn(ctx context.Context, url string, pool Querier) (Detected, error) {
	d := Detected{Kind: KindRewind, Backend: "postgres", Where: redact(url), url: url}
	names := []string{"checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations", "rewind_schema_migrations"}
	found, err := pgTables(ctx, pool, names)
	if err != nil {
		return d, fmt.Errorf("read the tables of %s: %w", d.Where, err)
	}
	if slices.Contains(found, "rewind_schema_migrations") {
		d.why = "is a rewind store"
		var v *int // unprepared, as pgTables: one round trip
		if err := pool.QueryRow(ctx, `SELECT max(version) FROM rewind_schema_migrations`, pgx.QueryExecModeExec).Scan(&v); err != nil || v == nil || *v <= 0 {
			d.Rewind, d.why = -1, fmt.Sprintf("is a rewind store whose schema version does not read (%s)", orNone(err))
		} else {
			d.Rewind = *v
		}
		return d, nil
	}
	lg := without(names[:4], found) // LangGraph's tables it lacks
	if len(lg) == 4 {
		d.why = "holds none of LangGraph's tables (checkpoints, checkpoint_blobs, checkpoint_writes)"
		return d, nil
	}
	cols := map[string][]string{}
	for _, table := range names[:3] {
		if !slices.Contains(found, table) {
			continue
		}
		if cols[table], err = pgColumns(ctx, pool, table); err != nil {
			return d, fmt.Errorf("read the columns of %s in %s: %w", table, d.Where, err)
		}
	}
	migrations := ""
	if slices.Contains(found, "checkpoint_migrations") {
		var v *int
		if err := pool.QueryRow(ctx, `SELECT max(v) FROM checkpoint_migrations`, pgx.QueryExecModeExec).Scan(&v); err != nil {
			return d, fmt.Errorf("read the migrations of %s: %w", d.Where, err)
		}
		migrations = "no migration recorded"
		if v != nil {
			migrations = fmt.Sprintf("migrations 0–%d", *v)
		}
	}
	// ShallowPostgresSaver keeps one checkpoint per thread and namespace:
	// its checkpoints have no checkpoint_id, its blobs no version.
	shallow := cols["checkpoints"] != nil && !slices.Contains(cols["checkpoints"], "checkpoint_id") &&
		len(without(pgShallowCheckpointCols, cols["checkpoints"])) == 0
	saver := "PostgresSaver"
	if shallow {
		saver = "ShallowPostgresSaver"
	}
	if missing := without(names[:3], found); len(missing) > 0 {
		// LangGraph's setup() creates them one migration at a time.
		has := list(without(names[:4], lg))
		if migrations != "" {
			has += " (" + migrations + ")"
		}
		return d, neither(fmt.Sprintf("%s is a LangGraph %s database whose setup() stopped half way: it has %s but not %s; run the saver's setup() to finish it, then read it",
			d.Where, saver, has, list(missing)))
	}
	want := map[string][]string{"checkpoints": pgCheckpointCols, "checkpoint_blobs": pgBlobCols, "checkpoint_writes": pgWriteCols}
	if shallow {
		want["checkpoints"], want["checkpoint_blobs"] = pgShallowCheckpointCols, pgShallowBlobCols
	}
	for _, table := range names[:3] {
		if missing := without(want[table], cols[table]); len(missing) > 0 {
			return d, neither(fmt.Sprintf("%s is neither a rewind store nor a LangGraph database: its table %s is named like LangGraph's but lacks %s; name a rewind store or a database LangGraph's PostgresSaver set up",
				d.Where, table, list(missing)))
		}
	}
	d.Kind, d.Schema, d.Shallow = KindLangGraph, "LangGraph "+saver+" tables", shallow
	if migrations != "" {
		d.Schema += ", " + migrations
	}
	if slices.Contains(cols["checkpoint_writes"], "task_path") {
		d.Schema += ", writes with task_path"
	}
	return d, nil
}

// pgTables are those of names the database has. Every command on
// PostgreSQL asks, so it is one round trip: one statement for all the
// names, run unprepared (pgx prepares a statement in a round trip of its
// own before its first run, and a command runs this one once). It was a
// statement a name, six round trips.
func pgTables(ctx context.Context, pool Querier, names []string) ([]string, error) {
	var found []string
	err := pool.QueryRow(ctx, `SELECT coalesce(array(SELECT n FROM unnest($1::text[]) WITH ORDINALITY AS t(n, i)
		WHERE to_regclass(n) IS NOT NULL ORDER BY i), '{}')`, pgx.QueryExecModeExec, names).Scan(&found)
	return found, err
}

func pgColumns(ctx context.Context, pool Querier, table string) ([]string, error) {
	rows, err := pool.Query(ctx, `SELECT attname FROM pg_attribute
		WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`, pgx.QueryExecModeExec, table) // once a command, as pgTables
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// pgDB is an open LangGraph PostgreSQL database.
type pgDB struct {
	pool     *pgxpool.Pool
	d        Detected
	taskPath bool
	shallow  bool
	// begin starts a snapshot: read only, JIT off, plans as the
	// server's default chooses (pgBegin), on the reader's own pool or on
	// one rewind's store set up.
	begin string
}

func openPostgres(ctx context.Context, d Detected) (*pgDB, error) {
	pool, err := pgConnect(ctx, d.url)
	if err != nil {
		return nil, err
	}
	db, err := newPGDB(ctx, pool, d)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("read %s: %w", d.Where, err)
	}
	return db, nil
}

func newPGDB(ctx context.Context, pool *pgxpool.Pool, d Detected) (*pgDB, error) {
	begin, err := pgBegin(ctx, pool)
	if err != nil {
		return nil, err
	}
	return &pgDB{pool: pool, d: d, taskPath: strings.Contains(d.Schema, "task_path"), shallow: d.Shallow, begin: begin}, nil
}

// OpenPostgresOn is OpenDetected of the PostgreSQL database DetectPostgres
// read on pool (rewind's store's first connection): the reader reads on
// it, so a command connects once, not twice (each session costs the
// server 30-60 ms of CPU to start and end). The reader owns the pool from
// then on and closes it with itself, or at once when d is not a LangGraph
// database. Its transactions are read only, JIT off and plans chosen as
// PostgreSQL's default chooses them, as on a connection of its own.
func OpenPostgresOn(ctx context.Context, d Detected, pool *pgxpool.Pool) (Source, error) {
	if d.Kind != KindLangGraph {
		pool.Close()
		return OpenDetected(ctx, d) // refused, with the reason
	}
	db, err := newPGDB(ctx, pool, d)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("read %s: %w", d.Where, err)
	}
	return &reader{db: db}, nil
}

// pgBegin is a snapshot's BEGIN: read only, and JIT off (compiling a
// listing's query costs more than it saves: 150 ms on a 10,000-checkpoint
// thread) and plan_cache_mode auto (rewind's store sets its own) for the
// transaction: only those the server has (jit from PostgreSQL 11,
// plan_cache_mode from 12).
func pgBegin(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return "", err
	}
	v := c.Conn().PgConn().ParameterStatus("server_version")
	c.Release()
	end := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(v)
	}
	major, _ := strconv.Atoi(v[:end])
	begin := "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
	if major >= 11 {
		begin += "; SET LOCAL jit = off"
	}
	if major >= 12 {
		begin += "; SET LOCAL plan_cache_mode = auto"
	}
	return begin, nil
}

func (p *pgDB) about() About {
	a := About{Kind: KindLangGraph, Backend: "postgres", Where: p.d.Where, Schema: p.d.Schema, ReadOnly: true}
	if p.shallow {
		a.Note = "ShallowPostgresSaver: only the newest checkpoint of each thread"
	}
	return a
}

func (p *pgDB) close() error { p.pool.Close(); return nil }

func (p *pgDB) snapshot(ctx context.Context) (snapshot, error) {
	tx, err := p.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly, BeginQuery: p.begin})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p.d.Where, err)
	}
	return &pgSnap{tx: tx, taskPath: p.taskPath, shallow: p.shallow}, nil
}

type pgSnap struct {
	tx       pgx.Tx
	taskPath bool
	// shallow: ShallowPostgresSaver's tables (the checkpoint's id in its
	// document, no parent, one blob per channel).
	shallow bool
}

// id is the checkpoint id column of table alias t ("" for none).
func (s *pgSnap) id(t string) string {
	if t != "" {
		t += "."
	}
	if s.shallow {
		return "(" + t + "checkpoint ->> 'id')"
	}
	return t + "checkpoint_id"
}

// parent is the parent id column of table alias t.
func (s *pgSnap) parent(t string) string {
	if s.shallow {
		return "''"
	}
	return "coalesce(" + t + ".parent_checkpoint_id, '')"
}

func (s *pgSnap) done() { _ = s.tx.Rollback(context.Background()) }

func (s *pgSnap) namespaces(ctx context.Context, thread string, one bool) ([]nsRow, error) {
	where, args := "", []any(nil)
	if one {
		where, args = "WHERE thread_id = $1", []any{thread}
	}
	rows, err := s.tx.Query(ctx, `
		SELECT g.thread_id, g.checkpoint_ns, g.n, g.latest, c.metadata
		FROM (SELECT thread_id, checkpoint_ns, count(*) AS n, max(`+s.id("")+`) AS latest, min(`+s.id("")+`) AS first
		      FROM checkpoints `+where+` GROUP BY thread_id, checkpoint_ns) g
		JOIN checkpoints c ON c.thread_id = g.thread_id AND c.checkpoint_ns = g.checkpoint_ns AND `+s.id("c")+` = g.first`, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (nsRow, error) {
		var n nsRow
		err := r.Scan(&n.thread, &n.ns, &n.checkpoints, &n.latest, &n.firstMeta)
		return n, err
	})
}

func (s *pgSnap) hasID(ctx context.Context, c Chain, id string) (bool, error) {
	var has bool
	err := s.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM checkpoints c
		WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 AND `+s.id("c")+` = $3)`, c.Thread, c.NS, id).Scan(&has)
	return has, err
}

func (s *pgSnap) newest(ctx context.Context, c Chain) (string, error) {
	var id string
	err := s.tx.QueryRow(ctx, `SELECT `+s.id("c")+` FROM checkpoints c
		WHERE c.thread_id = $1 AND c.checkpoint_ns = $2 ORDER BY `+s.id("c")+` DESC LIMIT 1`, c.Thread, c.NS).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return id, err
}

func (s *pgSnap) taskCheckpoint(ctx context.Context, c Chain, task string) (string, error) {
	var id string
	err := s.tx.QueryRow(ctx, `SELECT checkpoint_id FROM checkpoint_writes
		WHERE thread_id = $1 AND checkpoint_ns = $2 AND task_id = $3 ORDER BY checkpoint_id LIMIT 1`, c.Thread, c.NS, task).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return id, err
}

func (s *pgSnap) checkpoints(ctx context.Context, c Chain, q rowQuery) ([]row, error) {
	// A listing reads the checkpoint without its inline values, only
	// their names: Python keeps primitives inline (strings however long),
	// never Sends or joins.
	docExpr := `c.checkpoint - 'channel_values', ARRAY(SELECT jsonb_object_keys(coalesce(c.checkpoint -> 'channel_values', '{}')))`
	if q.full {
		docExpr = `c.checkpoint, NULL::text[]`
	}
	md := `c.metadata`
	if q.lean {
		md = `NULL::jsonb`
	}
	query := `SELECT ` + s.id("c") + `, ` + s.parent("c") + `, ` + docExpr + `, ` + md + `
		FROM checkpoints c WHERE c.thread_id = $1 AND c.checkpoint_ns = $2`
	args := []any{c.Thread, c.NS}
	switch {
	case q.id != "":
		query += ` AND ` + s.id("c") + ` = $3`
		args = append(args, q.id)
	case q.before != "":
		query += ` AND ` + s.id("c") + ` < $3`
		args = append(args, q.before)
	}
	query += ` ORDER BY ` + s.id("c") + ` DESC`
	if q.limit > 0 {
		query += fmt.Sprintf(` LIMIT %d`, q.limit)
	}
	rows, err := s.tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var out row
		var cp, md []byte
		var inline []string
		if err := r.Scan(&out.id, &out.parent, &cp, &inline, &md); err != nil {
			return out, err
		}
		out.doc = readDoc(TypeJSON, cp, q.full)
		out.doc.firstWrite = true
		for _, name := range inline {
			out.doc.values[name] = nil
		}
		if !q.lean {
			out.meta = readMeta(md)
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	if q.lean {
		return out, s.blobs(ctx, c, out, false, q.held)
	}
	return out, s.blobs(ctx, c, out, q.full, nil)
}

func (s *pgSnap) parents(ctx context.Context, c Chain) (map[string]string, error) {
	rows, err := s.tx.Query(ctx, `SELECT `+s.id("c")+`, `+s.parent("c")+`
		FROM checkpoints c WHERE c.thread_id = $1 AND c.checkpoint_ns = $2`, c.Thread, c.NS)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var id, parent string
	_, err = pgx.ForEachRow(rows, []any{&id, &parent}, func() error {
		out[id] = parent
		return nil
	})
	return out, err
}

// blobs adds the values stored apart: one query for the channel versions
// the rows name (a listing reads which exist, and only the Sends' and
// joins' values); with only, those channels' alone (a delta walk's: the
// blobs of a page of a thread's checkpoints took a PostgreSQL server
// 5 ms, most of the walk).
func (s *pgSnap) blobs(ctx context.Context, c Chain, rows []row, full bool, only []string) error {
	type key struct{ channel, version string }
	var channels, versions []string
	seen := map[key]bool{}
	for _, r := range rows {
		for ch, v := range r.doc.versions {
			if only != nil && !slices.Contains(only, ch) {
				continue
			}
			k := key{ch, s.version(v)}
			if !seen[k] {
				seen[k] = true
				channels, versions = append(channels, k.channel), append(versions, k.version)
			}
		}
	}
	if len(channels) == 0 {
		return nil
	}
	version, join := `bl.version`, ` AND bl.version = v.version`
	if s.shallow { // one blob per channel: the newest checkpoint's
		version, join = `''`, ``
	}
	res, err := s.tx.Query(ctx, `SELECT bl.channel, `+version+`, bl.type,
		       CASE WHEN $5 OR bl.channel = '`+chanTasks+`' OR bl.channel LIKE 'join:%' THEN bl.blob END
		FROM checkpoint_blobs bl JOIN unnest($3::text[], $4::text[]) AS v(channel, version)
		     ON bl.channel = v.channel`+join+`
		WHERE bl.thread_id = $1 AND bl.checkpoint_ns = $2`, c.Thread, c.NS, channels, versions, full)
	if err != nil {
		return err
	}
	type blob struct {
		typ  string
		data []byte
	}
	found := map[key]blob{}
	var k key
	var b blob
	_, err = pgx.ForEachRow(res, []any{&k.channel, &k.version, &b.typ, &b.data}, func() error {
		found[k] = b
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range rows {
		for ch, v := range r.doc.versions {
			if b, ok := found[key{ch, s.version(v)}]; ok {
				r.doc.addBlob(ch, b.typ, b.data, full)
			}
		}
	}
	return nil
}

// version is the blob key of a channel version: "" on shallow tables,
// which keep one blob per channel.
func (s *pgSnap) version(v any) string {
	if s.shallow {
		return ""
	}
	return versionText(v)
}

func (s *pgSnap) writes(ctx context.Context, c Chain, from, to string, values bool) ([]writeRow, error) {
	return s.readWrites(ctx, c, from, to, values, "")
}

func (s *pgSnap) channelWrites(ctx context.Context, c Chain, ch, from, to string) ([]writeRow, error) {
	return s.readWrites(ctx, c, from, to, true, ch)
}

// readWrites reads the writes of checkpoints from..to: to channel ch
// alone unless ch is "".
func (s *pgSnap) readWrites(ctx context.Context, c Chain, from, to string, values bool, ch string) ([]writeRow, error) {
	path, order := `''`, `task_id, idx`
	if s.taskPath {
		path, order = `task_path`, `task_path, task_id, idx`
	}
	rows, err := s.tx.Query(ctx, `SELECT checkpoint_id, task_id, idx, channel, coalesce(type, ''), `+path+`,
		CASE WHEN $5 OR channel = '`+chanTasks+`' THEN blob END
		FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = $2 AND checkpoint_id BETWEEN $3 AND $4
		AND ($6 = '' OR channel = $6)
		ORDER BY checkpoint_id, `+order, c.Thread, c.NS, from, to, values, ch)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (writeRow, error) {
		var w writeRow
		err := r.Scan(&w.checkpoint, &w.task, &w.idx, &w.channel, &w.typ, &w.path, &w.value)
		return w, err
	})
}

// firstWrites lists the channels with a stored value in chain c: every
// value PostgresSaver does not keep inline (lists, maps: a reducer's) is a
// blob at each version written, from the first write on ("empty" marks a
// version that cleared the channel), and the channels pending writes name.
func (s *pgSnap) firstWrites(ctx context.Context, c Chain) ([]string, error) {
	// A pending write names a channel too: a Command(update=…) to a
	// thread stopped at an interrupt is only a write until it resumes.
	rows, err := s.tx.Query(ctx, `SELECT channel FROM checkpoint_blobs
		WHERE thread_id = $1 AND checkpoint_ns = $2 AND type <> 'empty'
		UNION SELECT channel FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns = $2`, c.Thread, c.NS)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// CheckPostgresURL is Detect's refusal of a postgres:// spec that does
// not parse, nil for one that does: a caller connecting on its own
// (DetectPostgres) refuses a bad URL in Detect's words.
func CheckPostgresURL(spec string) error {
	_, err := pgConfig(strings.TrimSpace(spec))
	return err
}
