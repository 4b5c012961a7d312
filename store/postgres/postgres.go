// Package postgres is the PostgreSQL backend of store.Store: the shared
// store for several processes or machines working on the same threads.
//
// Checkpoints live in graph_checkpoints (the seed's table), pending task
// writes in graph_writes, events in graph_events, the conversation's
// messages in graph_messages and shared large values in graph_blobs, all
// legible in psql. The package owns those tables and versions them itself (embedded
// migrations, recorded in rewind_schema_migrations); it refuses a database
// whose tables it did not create, or whose store schema is newer than it.
//
// Documents are stored as json: the text as written, checked to be JSON,
// given back byte for byte (rows stored before store schema 7 were jsonb
// and read back as jsonb printed them: the same JSON). Equality is asked
// of their jsonb form, so the JSON escapes jsonb refuses (\u0000 and
// unpaired surrogates) are kept under a private-use marker rune, U+E000,
// and given back as the same JSON; see toJSONB. Message and blob bodies
// are text, given back byte for byte.
//
// Several processes may Open the same database at once: migrations are
// serialised by an advisory lock.
//
// Lock holds a session advisory lock on a connection of its own, so a
// writer that dies loses its connection and with it the lock. Released,
// the connection is kept for the next Lock rather than closed.
package postgres

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"rewind/store"
	"rewind/store/internal/check"
)

// Store is a store.Store on a PostgreSQL database.
type Store struct {
	pool   *pgxpool.Pool
	target target
	hook   atomic.Pointer[func(stage string)]

	// ran counts the runs of each statement this store has run
	// (unprepared).
	ran sync.Map

	// maxIdle is how long a spare lock connection may sit unused before
	// it is closed rather than reused (the pool's MaxConnIdleTime).
	maxIdle time.Duration

	// privileges name the user and rewind's tables in permission errors,
	// read when one needs them (who), not at every Open.
	privMu     sync.Mutex
	privileges privileges
	privRead   bool

	done chan struct{} // closed by Close: ends the watchers

	// floodPauses counts the times a watcher stopped listening under a
	// flood of notifications (the tests read it).
	floodPauses atomic.Int64

	mu     sync.Mutex
	locks  map[*pgx.Conn]struct{} // connections holding a thread lock
	spare  []spareConn            // unlocked lock connections, most recently used last
	closed bool
}

// spareConn is a lock connection whose lock was released, kept for the
// next Lock.
type spareConn struct {
	conn  *pgx.Conn
	since time.Time
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.Drafts      = (*Store)(nil)
	_ store.SizeCounter = (*Store)(nil)
)

// Open connects to the database at url (postgres://user:pass@host:port/db),
// brings the store's tables up to date and returns the store. Each
// connection attempt gives up after 5 s unless the URL sets connect_timeout.
func Open(ctx context.Context, url string) (*Store, error) {
	return open(ctx, url, nil)
}

// Conn is a connected store not opened yet: its connection answers a
// caller's questions (what the database holds: cli/app's detection) before
// Open migrates and opens the store on it, so a command connects once.
type Conn struct{ s *Store }

// Connect connects to the database at url as Open does, creating and
// migrating nothing; its error is Open's for a failed connect.
func Connect(ctx context.Context, url string) (*Conn, error) {
	s, err := dial(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	return &Conn{s}, nil
}

// Pool is the connection pool, for reads before Open.
func (c *Conn) Pool() *pgxpool.Pool { return c.s.pool }

// Open brings the store's tables up to date on the connection and returns
// the store, which owns the connection from then on (closed on failure).
func (c *Conn) Open(ctx context.Context) (*Store, error) {
	if err := c.s.migrate(ctx); err != nil {
		c.s.pool.Close()
		return nil, err
	}
	return c.s, nil
}

// Close closes a connection that was not opened as a store.
func (c *Conn) Close() { c.s.pool.Close() }

// open is Open with a hook that may adjust the pool's configuration (the
// tests count round trips with it).
func open(ctx context.Context, url string, configure func(*pgxpool.Config)) (*Store, error) {
	s, err := dial(ctx, url, configure)
	if err != nil {
		return nil, err
	}
	return (&Conn{s}).Open(ctx)
}

// dial is open without the migration: the store on its first connection.
func dial(ctx context.Context, url string, configure func(*pgxpool.Config)) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgconn masks the password in its message.
		return nil, fmt.Errorf("postgres store: bad URL (want postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable]): %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout <= 0 {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		// For pg_stat_activity, and LockHolder names the process by it.
		cfg.ConnConfig.RuntimeParams["application_name"] = appName()
	}
	// Every statement is a lookup by the thread's keys, which a generic
	// plan serves as well as a custom one (better, for History and
	// Messages). By default PostgreSQL plans the first five runs of each
	// statement on each connection afresh, 0.2-0.8 ms of a put's bind
	// each: all of a short process's puts.
	generic := cfg.ConnConfig.RuntimeParams["plan_cache_mode"] == ""
	if generic {
		cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	}
	if configure != nil {
		configure(cfg)
	}
	t := newTarget(cfg)
	pool, err := connect(ctx, cfg, t)
	if err != nil && generic && unknownSetting(err) { // PostgreSQL before 12
		delete(cfg.ConnConfig.RuntimeParams, "plan_cache_mode")
		pool, err = connect(ctx, cfg, t)
	}
	if err != nil {
		return nil, err
	}
	return &Store{pool: pool, target: t, maxIdle: cfg.MaxConnIdleTime, locks: map[*pgx.Conn]struct{}{}, done: make(chan struct{})}, nil
}

// connect sets up the pool and makes its first connection.
func connect(ctx context.Context, cfg *pgxpool.Config, t target) (*pgxpool.Pool, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, t.wrap(err, "cannot set up a connection pool for %s", t)
	}
	// Connect now, for the connect's error here; no ping on top (a round
	// trip): the pool pings a connection only after it sat idle.
	pc, err := pool.Acquire(ctx)
	if err != nil {
		pool.Close()
		return nil, t.connectError(ctx, err)
	}
	pc.Release()
	return pool, nil
}

// unknownSetting is the server refusing a startup parameter it does not have.
func unknownSetting(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "42704"
}

// Pool is the store's connection pool, for what measures beside the
// store (the bench's floor, store/postgres/floor): it writes no table of
// the store's.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// unprepared is a read's arguments led by how pgx is to run sql: its
// first two runs in this store unprepared, one round trip each, where
// pgx's statement cache spends two on a statement's first run on a
// connection (prepare, then run); its later runs through the cache (the
// third prepares it). A statement run once or twice then costs one round
// trip a run, and one run more often costs no more than preparing it at
// once would have (N+1 for N runs). A command runs most of its reads
// once or twice (show reads the newest listings twice: the graph's and
// the costs'), and a server far away charges its latency per round trip.
// A put's statement, one a shape of put, and a task's writes' go the
// same way: a one-turn command runs several once or twice.
func (s *Store) unprepared(sql string, args ...any) []any {
	mode := pgx.QueryExecModeCacheStatement
	n, ok := s.ran.Load(sql)
	if !ok {
		n, _ = s.ran.LoadOrStore(sql, new(atomic.Int64))
	}
	if n.(*atomic.Int64).Add(1) <= unpreparedRuns {
		mode = pgx.QueryExecModeExec
	}
	return append([]any{mode}, args...)
}

// unpreparedRuns is how many runs of a statement go unprepared.
const unpreparedRuns = 2

// Close releases every lock still held and closes the connections.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	locks, spare := s.locks, s.spare
	s.locks, s.spare = nil, nil
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for c := range locks {
		_ = c.Close(ctx) // the server drops the lock with the session
	}
	for _, sc := range spare {
		_ = sc.conn.Close(ctx)
	}
	s.pool.Close()
	return nil
}

// fail prefixes a failed call's error with what was being done, masking
// the password in driver messages. Sentinels stay visible to errors.Is.
func (s *Store) fail(err *error, format string, args ...any) {
	if *err != nil {
		*err = s.target.wrap(*err, format, args...)
	}
}

// db names the database a driver error came from; the caller's own
// cancellations and the server's errors are clear enough as they are.
func (s *Store) db(err error) error {
	var pgErr *pgconn.PgError
	if serverClosed(err) {
		s.dropConnections()
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &pgErr) && pgErr.Code == "42501":
		// db has no caller's context: the read of who is refused is bounded.
		ctx, cancel := context.WithTimeout(context.Background(), defaultConnectTimeout)
		defer cancel()
		return s.deniedError(ctx, pgErr)
	case errors.As(err, &pgErr) && pgErr.Code == "53100": // disk_full
		return fmt.Errorf("%w; the disk holding the database of %s is full: free space on the server (%w)", err, s.target, store.ErrDiskFull)
	case errors.As(err, &pgErr):
		// Input the server refuses is refused input, as in the other stores.
		if pgErr.Code == "54000" && strings.Contains(pgErr.Message, "index row") {
			return fmt.Errorf("an id is too long for PostgreSQL's index (ids of more than about 2,700 bytes after compression do not fit); use a shorter id (%w): %w", store.ErrInvalid, err)
		}
		if strings.HasPrefix(pgErr.Code, "22") || strings.HasPrefix(pgErr.Code, "54") {
			return fmt.Errorf("PostgreSQL refused a document (%w): %w", store.ErrInvalid, err)
		}
		return err
	case pgconn.Timeout(err):
		return fmt.Errorf("no answer from %s: %w", s.target, err)
	}
	return fmt.Errorf("%s: %w", s.target, err)
}

// serverClosed says whether err is the server ending the session: an
// administrator's command (pg_terminate_backend, a fast shutdown), a
// crash, a server starting up (57P01-57P03), or the connection found
// closed. After a restart every connection of the pool is closed so: the
// first statement on each failed, the next one too (the TUI left open
// across a restart failed its next one or two turns).
func serverClosed(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03":
			return true
		}
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// again runs a read once more when it failed on a connection the server
// had closed (serverClosed; s.db dropped the pool's other connections,
// closed as well): a read changes nothing, so it may run twice.
func again[T any](ctx context.Context, read func() (T, error)) (T, error) {
	v, err := read()
	if err != nil && serverClosed(err) && ctx.Err() == nil {
		return read()
	}
	return v, err
}

// dropConnections closes the pool's idle connections and the spare lock
// connections, and has the pool close those in use when they come back:
// after the server closed one, the others are closed too.
func (s *Store) dropConnections() {
	s.pool.Reset()
	s.mu.Lock()
	spare := s.spare
	s.spare = nil
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, sc := range spare {
		_ = sc.conn.Close(ctx)
	}
}

// fenceOK is true when the write's epoch (the parameter epoch, of the
// thread in the parameter thread: "$5" or "@epoch") is the thread's current
// one. FOR SHARE holds the epoch row until COMMIT, so a concurrent Fence
// waits for this write, or this write waits for the Fence and then sees
// its epoch. An unfenced write (epoch 0) takes a statement that never
// touches the row (fenced false: it asks for the lock, and so for the
// UPDATE privilege, only when it is fenced); plans are generic, so the
// statement itself must leave the lock out, not a plan for epoch 0.
func fenceOK(epoch, thread string, fenced bool) string {
	if !fenced {
		return epoch + `::bigint = 0`
	}
	return epoch + `::bigint = (select epoch from graph_epochs where thread_id = ` + thread + ` for share)`
}

// fenced indexes the two forms of a statement with fenceOK: 0 for an
// unfenced write (epoch 0), 1 for a fenced one.
func fenced(epoch int64) int {
	if epoch == 0 {
		return 0
	}
	return 1
}

// putCheckpointSQL writes the checkpoint, its events, its new messages and
// blobs, its head snapshot, and deletes the task writes it settles, in one
// statement, hence one transaction and one round trip. The checkpoint goes
// in only when it is newer than the thread's newest, its parent exists and
// its epoch is current; everything else happens only with it (each CTE
// reads cp). It locks the thread's graph_threads row (thr) before its
// graph_sizes row (sz waits for thr's row): the order lockThreadSQL and
// lockSizeSQL take them in. Left to the server, the unreferenced thr ran
// last, after sz, and a Prune holding the thread's row waited for the
// size row this put held: a deadlock (PruneRacesWriters, 1 run in ~10).
// Messages and blobs already held by the thread are left as
// they are (on conflict do nothing), so the first put of a hash keeps its
// row. On zero rows the caller asks why; also when a concurrent put of
// the id committed after this statement's snapshot: the insert then fails
// on the primary key (23505), which is cheaper than an ON CONFLICT clause
// on every put (its speculative insertion cost a put a tenth of its
// server CPU).
//
// It is a template: putStatements keep only the optional parts a put has
// (a put without events has no events CTE, so the server neither sets up
// nor runs an insert into graph_events: that cut a turn's mix of puts'
// server CPU by about a fifth) and number the @names they keep $1, $2, ... The
// names are putArgs'; @note is the notification's payload (notePayload):
// NOTIFY is sent at COMMIT, so only a put that stored a checkpoint and
// committed wakes Watch. @parent and @meta are null for none, @created
// null for the transaction's now(). A function: putStatements alone
// needs it, at a process's first put.
func putCheckpointSQL() string {
	return `
with cp as (
  insert into graph_checkpoints (thread_id, checkpoint_id, parent_id, meta, state, base, blob_refs, created_at)
  select @thread, @id, @parent, @meta::json, @state::json, @base::boolean, @refs::text[], coalesce(@created::timestamptz, now())
  where not exists (select 1 from graph_checkpoints where thread_id = @thread and checkpoint_id >= @id)
    and (@parent::bigint is null or exists (select 1 from graph_checkpoints where thread_id = @thread and checkpoint_id = @parent))
    and ` + fenceOK("@epoch", "@thread", true) + `
  returning created_at
), thr as (
  insert into graph_threads (thread_id, checkpoints, latest_id, updated_at)
  select @thread, 1, @id, cp.created_at from cp
  on conflict (thread_id) do update set checkpoints = graph_threads.checkpoints + 1,
    latest_id = greatest(graph_threads.latest_id, excluded.latest_id),
    updated_at = case when excluded.latest_id >= graph_threads.latest_id then excluded.updated_at else graph_threads.updated_at end
  returning 1
)` + putEventsSQL + putMessagesSQL + putBlobsSQL + putHeadSQL + putSettlesSQL + `, sz as (
  insert into graph_sizes as g (thread_id, bytes)
  select @thread, octet_length(@thread::text) + 5*8 + coalesce(octet_length(@meta::json::text), 0) + octet_length(@state::json::text)
    + coalesce((select sum(octet_length(r)) from unnest(@refs::text[]) r), 0)` + sizeEventsSQL + sizeMessagesSQL + sizeBlobsSQL + sizeSettlesSQL + `
  from cp where exists (select 1 from thr)
  on conflict (thread_id) do update set bytes = g.bytes + excluded.bytes
), note as (
  select pg_notify('` + notifyChannel + `', @note::text) from cp
)
select count(*) from cp, note`
}

// The optional parts of putCheckpointSQL, each a CTE after cp.
const (
	putEventsSQL = `, ev as (
  insert into graph_events (thread_id, checkpoint_id, seq, type, payload, created_at)
  select @thread, @id, e.seq, e.type, e.payload::json, cp.created_at
  from cp, unnest(@ev_seq::int[], @ev_type::text[], @ev_payload::text[]) as e(seq, type, payload)
)`
	putMessagesSQL = `, msg as (
  insert into graph_messages (thread_id, hash, idx, body, checkpoint_id, created_at, words)
  select @thread, m.hash, m.idx, m.body, @id, cp.created_at, array_to_tsvector(string_to_array(m.words, ' '))
  from cp, unnest(@m_hash::text[], @m_idx::bigint[], @m_body::text[], @m_words::text[]) as m(hash, idx, body, words)
  on conflict do nothing
  returning octet_length(thread_id) + 3*8 + octet_length(hash) + octet_length(body) as n
)`
	putBlobsSQL = `, blob as (
  insert into graph_blobs (thread_id, hash, body, created_at)
  select @thread, b.hash, b.body, cp.created_at
  from cp, unnest(@b_hash::text[], @b_body::text[]) as b(hash, body)
  on conflict do nothing
  returning octet_length(thread_id) + 8 + octet_length(hash) + octet_length(body) as n
)`
	putHeadSQL = `, head as (
  insert into graph_heads (thread_id, checkpoint_id, doc)
  select @thread, @id, @head::json from cp
  on conflict (thread_id) do update set checkpoint_id = excluded.checkpoint_id, doc = excluded.doc
)`
	putSettlesSQL = `, settled as (
  delete from graph_writes
  where thread_id = @thread and checkpoint_id = @settles and exists (select 1 from cp)
  returning octet_length(thread_id) + 2*8 + octet_length(task_id) + octet_length(writes::text) as n
)`
	// The thread's size (graph_sizes) grows by each part's rows: what
	// it inserted (the new messages and blobs alone), less the writes
	// settled. Not the head: Size reads it (sizeHeadSQL).
	sizeEventsSQL = `
    + (select coalesce(sum(octet_length(@thread::text) + 3*8 + octet_length(e.type) + octet_length(e.payload)), 0)
       from unnest(@ev_type::text[], @ev_payload::text[]) as e(type, payload))`
	sizeMessagesSQL = `
    + (select coalesce(sum(n), 0) from msg)`
	sizeBlobsSQL = `
    + (select coalesce(sum(n), 0) from blob)`
	sizeSettlesSQL = `
    - (select coalesce(sum(n), 0) from settled)`
)

// putArgs name putCheckpointSQL's arguments, in the order PutCheckpoint
// gives them.
var putArgs = []string{"thread", "id", "parent", "state", "ev_seq", "ev_type", "ev_payload", "epoch", "meta", "base", "refs",
	"m_hash", "m_idx", "m_body", "b_hash", "b_body", "settles", "note", "created", "head", "m_words"}

// putPart is an optional part of a put's statement.
type putPart uint8

const (
	putEvents putPart = 1 << iota
	putMessages
	putBlobs
	putHead
	putSettles
	putFenced             // epoch not 0: fenceOK
	putShapes = 1 << iota // how many statements there are
)

// putStatement is putCheckpointSQL for a put with these parts: its text
// and which of putArgs it takes, in $ order.
type putStatement struct {
	sql  string
	args []int
}

// putStatements are made at a process's first put, not at its start:
// every command (most only read, most on sqlite) paid for the 64 shapes.
var putStatements = sync.OnceValue(func() (out [putShapes]putStatement) {
	parts := []struct {
		part putPart
		sql  string
	}{{putEvents, putEventsSQL}, {putMessages, putMessagesSQL}, {putBlobs, putBlobsSQL}, {putHead, putHeadSQL}, {putSettles, putSettlesSQL},
		{putEvents, sizeEventsSQL}, {putMessages, sizeMessagesSQL}, {putBlobs, sizeBlobsSQL}, {putSettles, sizeSettlesSQL}}
	for shape := range out {
		sql := putCheckpointSQL()
		for _, p := range parts {
			if putPart(shape)&p.part == 0 {
				sql = strings.Replace(sql, p.sql, "", 1)
			}
		}
		if putPart(shape)&putFenced == 0 {
			sql = strings.Replace(sql, fenceOK("@epoch", "@thread", true), fenceOK("@epoch", "@thread", false), 1)
		}
		out[shape] = numberArgs(sql, putArgs)
	}
	return out
})

// numberArgs replaces each @name of sql by $N, numbered in order of first
// use, and says which of names each $N is.
func numberArgs(sql string, names []string) putStatement {
	var b strings.Builder
	var order []int
	num := map[string]int{}
	for {
		i := strings.IndexByte(sql, '@')
		if i < 0 {
			b.WriteString(sql)
			break
		}
		b.WriteString(sql[:i])
		sql = sql[i+1:]
		end := strings.IndexFunc(sql, func(r rune) bool { return !(r == '_' || 'a' <= r && r <= 'z') })
		if end < 0 {
			end = len(sql)
		}
		name := sql[:end]
		sql = sql[end:]
		n, ok := num[name]
		if !ok {
			at := slices.Index(names, name)
			if at < 0 {
				panic("postgres store: no argument @" + name)
			}
			order = append(order, at)
			n = len(order)
			num[name] = n
		}
		fmt.Fprintf(&b, "$%d", n)
	}
	return putStatement{sql: b.String(), args: order}
}

// whyNotSQL tells why putCheckpointSQL inserted nothing: the newest id,
// whether a checkpoint with this id holds the same parent, meta, state and
// base, the same events (check.Put made seqs unique), whether the parent
// exists, the thread's writer epoch and the store's epoch counter. A re-rooted checkpoint's parent
// matches both null and the parent it had (check.SameParent); a missing
// meta matches only a missing one (check.SameMeta). Its parameters are
// putArgs' first seven, then $8 meta and $9 base.
const whyNotSQL = `
select
  (select max(checkpoint_id) from graph_checkpoints where thread_id = $1),
  (select (parent_id is not distinct from $3::bigint or parent_id is null and rerooted_from is not distinct from $3::bigint)
          and state::jsonb = $4::jsonb and meta::jsonb is not distinct from $8::jsonb and base = $9::boolean
     from graph_checkpoints where thread_id = $1 and checkpoint_id = $2),
  (select count(*) from graph_events where thread_id = $1 and checkpoint_id = $2) = cardinality($5::int[])
    and not exists (
      select e.seq, e.type, e.payload::jsonb from unnest($5::int[], $6::text[], $7::text[]) as e(seq, type, payload)
      except
      select seq, type, payload::jsonb from graph_events where thread_id = $1 and checkpoint_id = $2),
  $3::bigint is null or exists (select 1 from graph_checkpoints where thread_id = $1 and checkpoint_id = $3),
  coalesce((select epoch from graph_epochs where thread_id = $1), 0),
  (select issued from graph_epoch_counter)`

// PutCheckpoint implements store.Store.
func (s *Store) PutCheckpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) (err error) {
	defer s.fail(&err, "put checkpoint %d of thread %v", cp.ID, check.Name(cp.ThreadID))
	if events, err = check.Put(cp, events); err != nil {
		return err
	}
	put, err := putRowOf(cp, events)
	if err != nil {
		return err
	}
	// More than one try covers a race with a concurrent delete, insert or
	// fence that made the insert skip but left nothing to explain it.
	for range 3 {
		n, err := s.insertCheckpoint(ctx, put.stmt.sql, put.args)
		var pgErr *pgconn.PgError
		switch {
		case errors.As(err, &pgErr) && pgErr.Code == "23503": // the parent was deleted meanwhile
			return fmt.Errorf("parent checkpoint %d: %w", cp.ParentID, store.ErrNotFound)
		case errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "graph_checkpoints_pkey":
			// A concurrent put of this id won: ask why, as for zero rows.
		case err != nil:
			return s.db(err)
		}
		if n == 1 {
			return nil
		}
		if done, err := s.whyNot(ctx, cp, put.why); done || err != nil {
			return err
		}
	}
	return errors.New("it keeps racing with another writer of the thread; try again")
}

// putRow is a put's statement with its arguments, and whyNotSQL's.
type putRow struct {
	stmt      putStatement
	args, why []any
}

// putRowOf is the statement and arguments that put cp and its events
// (check.Put passed them): only the parts the put has (putShape).
func putRowOf(cp store.Checkpoint, events []store.Event) (putRow, error) {
	doc, err := toJSONB(cp.State)
	if err != nil {
		return putRow{}, fmt.Errorf("state %w", err)
	}
	// Documents go as text (string, *string): pgx sends []byte as bytea
	// when the statement runs unprepared (Store.unprepared).
	state := string(doc)
	var meta *string // null: a listing-less row
	if doc, err := optJSONB(cp.Meta); err != nil {
		return putRow{}, fmt.Errorf("meta %w", err)
	} else if doc != nil {
		m := string(doc)
		meta = &m
	}
	var parent *int64
	if cp.ParentID != 0 {
		parent = &cp.ParentID
	}
	seqs, types, payloads, err := eventColumns(events)
	if err != nil {
		return putRow{}, err
	}
	var refs []string // null when there are none, as in rows written before blobs existed
	if len(cp.BlobRefs) > 0 {
		refs = cp.BlobRefs
	}
	// Bodies go in as text, byte for byte (check.Put made them valid UTF-8
	// JSON, which holds no NUL byte).
	mHashes := make([]string, len(cp.Messages))
	mIndexes := make([]int64, len(cp.Messages))
	mBodies := make([]string, len(cp.Messages))
	mWords := make([]string, len(cp.Messages)) // Search: store.BodyWords, space-separated
	for i, m := range cp.Messages {
		mHashes[i], mIndexes[i], mBodies[i], mWords[i] = m.Hash, m.Index, string(m.Body), strings.Join(store.BodyWords(m.Body), " ")
	}
	bHashes := make([]string, len(cp.Blobs))
	bBodies := make([]string, len(cp.Blobs))
	for i, b := range cp.Blobs {
		bHashes[i], bBodies[i] = b.Hash, string(b.Body)
	}
	var head *string // null: no head snapshot in this put
	if len(cp.Head) > 0 {
		doc, err := toJSONB(cp.Head)
		if err != nil {
			return putRow{}, fmt.Errorf("head snapshot %w", err)
		}
		h := string(doc)
		head = &h
	}
	var created *time.Time // timestamptz keeps microseconds
	if !cp.CreatedAt.IsZero() {
		created = &cp.CreatedAt
	}
	all := [...]any{cp.ThreadID, cp.ID, parent, state, seqs, types, payloads, cp.Epoch, meta, cp.Base, refs,
		mHashes, mIndexes, mBodies, bHashes, bBodies, cp.Settles, notePayload(cp.ThreadID), created, head, mWords}
	put := putRow{
		stmt: putStatements()[putShape(cp, len(events))],
		why:  []any{cp.ThreadID, cp.ID, parent, state, seqs, types, payloads, meta, cp.Base},
	}
	put.args = make([]any, len(put.stmt.args))
	for i, a := range put.stmt.args {
		put.args[i] = all[a]
	}
	return put, nil
}

// eventColumns is events as the put's three arrays.
func eventColumns(events []store.Event) (seqs []int32, types, payloads []string, err error) {
	seqs = make([]int32, len(events))
	types = make([]string, len(events))
	payloads = make([]string, len(events))
	for i, e := range events {
		if e.Seq > math.MaxInt32 {
			return nil, nil, nil, check.Invalid("event seq %d is too large", e.Seq)
		}
		p, err := toJSONB(e.Payload)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("payload of event %d %w", e.Seq, err)
		}
		seqs[i], types[i], payloads[i] = int32(e.Seq), e.Type, string(p)
	}
	return seqs, types, payloads, nil
}

// putShape is which optional parts a put of cp with events has.
func putShape(cp store.Checkpoint, events int) putPart {
	var shape putPart
	for _, p := range []struct {
		has  bool
		part putPart
	}{
		{events > 0, putEvents}, {len(cp.Messages) > 0, putMessages}, {len(cp.Blobs) > 0, putBlobs},
		{len(cp.Head) > 0, putHead}, {cp.Settles != 0, putSettles}, {cp.Epoch != 0, putFenced},
	} {
		if p.has {
			shape |= p.part
		}
	}
	return shape
}

// whyNot asks why a put inserted nothing (whyNotSQL): done when the same
// checkpoint and events are stored already, else the refusal; neither
// when nothing explains it (a race: try the put again).
func (s *Store) whyNot(ctx context.Context, cp store.Checkpoint, why []any) (done bool, err error) {
	var newest *int64
	var same *bool
	var sameEvents, parentOK bool
	var current, issued int64
	if err := s.pool.QueryRow(ctx, whyNotSQL, why...).Scan(&newest, &same, &sameEvents, &parentOK, &current, &issued); err != nil {
		return false, s.db(err)
	}
	if same != nil && *same && sameEvents {
		return true, nil
	}
	if err := check.Fenced(cp.ThreadID, cp.Epoch, current, issued); err != nil {
		return false, err
	}
	switch {
	case same != nil:
		return false, store.ErrConflict
	case newest != nil && *newest > cp.ID:
		return false, fmt.Errorf("the newest is %d: %w", *newest, store.ErrStale)
	case !parentOK:
		return false, fmt.Errorf("parent checkpoint %d: %w", cp.ParentID, store.ErrNotFound)
	}
	return false, nil
}

// optJSONB is toJSONB for an optional document: nil (SQL null) when absent.
func optJSONB(doc []byte) ([]byte, error) {
	if len(doc) == 0 {
		return nil, nil
	}
	return toJSONB(doc)
}

// insertCheckpoint runs a putStatement: on its own (one statement, one
// round trip), or with a hook set, in an explicit transaction so the hook
// runs after the rows are written and before COMMIT.
func (s *Store) insertCheckpoint(ctx context.Context, sql string, args []any) (n int, err error) {
	hook := s.hook.Load()
	if hook == nil {
		err = s.pool.QueryRow(ctx, sql, s.unprepared(sql, args...)...).Scan(&n)
		return n, err
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // a no-op after Commit
	if err := tx.QueryRow(ctx, sql, args...).Scan(&n); err != nil || n == 0 {
		return n, err
	}
	(*hook)("checkpoint-written")
	return n, tx.Commit(ctx)
}

// SetTxHook sets a function PutCheckpoint calls with "checkpoint-written"
// once a new checkpoint's rows are written, before COMMIT: the crash drills
// kill the process there. While one is set, puts take an explicit
// transaction (two more round trips). nil removes it.
func (s *Store) SetTxHook(hook func(stage string)) {
	if hook == nil {
		s.hook.Store(nil)
		return
	}
	s.hook.Store(&hook)
}

// fenceSQL hands out the next epoch of the store's counter and makes it
// the thread's, in one statement. The thread's row is locked first: that
// waits for its fenced writes in flight (which hold it FOR SHARE), before
// the counter's row is locked, so they hold up fences of this thread
// only. The counter's row lock orders concurrent fences; the next epoch
// is above the thread's own too, in case the counter ever fell behind.
const fenceSQL = `
with mine as (
  select epoch from graph_epochs where thread_id = $1 for update
), next as (
  update graph_epoch_counter set issued = greatest(issued, coalesce((select epoch from mine), 0)) + 1
  returning issued
), e as (
  insert into graph_epochs as g (thread_id, epoch)
  select $1, issued from next
  on conflict (thread_id) do update set epoch = excluded.epoch, fenced_at = now()
  returning epoch, xmax = 0 as inserted -- xmax 0: a new row, not the conflict's update
), sz as (
  insert into graph_sizes as z (thread_id, bytes)
  select $1, octet_length($1::text) + 2*8 from e where inserted
  on conflict (thread_id) do update set bytes = z.bytes + excluded.bytes
)
select epoch from e`

// Fence implements store.Store.
func (s *Store) Fence(ctx context.Context, thread string) (epoch int64, err error) {
	defer s.fail(&err, "fence thread %v", check.Name(thread))
	if err := check.Text("thread id", thread); err != nil {
		return 0, err
	}
	err = s.pool.QueryRow(ctx, fenceSQL, thread).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) { // the counter's row is gone: someone edited the table
		return 0, errors.New("table graph_epoch_counter has lost its one row: restore it from a backup, or insert a row with the highest epoch ever handed out")
	}
	return epoch, s.db(err)
}

// Epoch implements store.Store.
func (s *Store) Epoch(ctx context.Context, thread string) (epoch int64, err error) {
	defer s.fail(&err, "read the writer epoch of thread %v", check.Name(thread))
	if err := check.Text("thread id", thread); err != nil {
		return 0, err
	}
	err = s.pool.QueryRow(ctx, `select epoch from graph_epochs where thread_id = $1`, thread).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return epoch, s.db(err)
}

// putWritesSQL inserts one task's writes if the checkpoint exists and the
// epoch is current (see fenceOK; index it by fenced). The outer select
// sees the tables as they were before the insert, so it shows an existing
// row (to compare) but not the one just inserted.
// Made at the first put, as putStatements.
var putWritesSQL = sync.OnceValue(func() [2]string { return [2]string{putWrites(false), putWrites(true)} })

func putWrites(fenced bool) string {
	return `
with w as (
  insert into graph_writes (thread_id, checkpoint_id, task_id, writes)
  select $1, $2, $3, $4::json
  where exists (select 1 from graph_checkpoints where thread_id = $1 and checkpoint_id = $2)
    and ` + fenceOK("$5", "$1", fenced) + `
  on conflict do nothing
  returning octet_length(thread_id) + 2*8 + octet_length(task_id) + octet_length(writes::text) as n
), sz as (
  insert into graph_sizes as g (thread_id, bytes) select $1, n from w
  on conflict (thread_id) do update set bytes = g.bytes + excluded.bytes
)
select
  (select count(*) from w),
  (select writes::jsonb = $4::jsonb from graph_writes where thread_id = $1 and checkpoint_id = $2 and task_id = $3),
  exists (select 1 from graph_checkpoints where thread_id = $1 and checkpoint_id = $2),
  coalesce((select epoch from graph_epochs where thread_id = $1), 0),
  (select issued from graph_epoch_counter)`
}

// PutWrites implements store.Store.
func (s *Store) PutWrites(ctx context.Context, w store.TaskWrites) (err error) {
	defer s.fail(&err, "put writes of task %v at checkpoint %d of thread %v", check.Name(w.TaskID), w.CheckpointID, check.Name(w.ThreadID))
	if err := check.Writes(w); err != nil {
		return err
	}
	doc, err := toJSONB(w.Writes)
	if err != nil {
		return fmt.Errorf("writes %w", err)
	}
	for range 3 {
		var n int
		var same *bool
		var cpExists bool
		var current, issued int64
		q := putWritesSQL()[fenced(w.Epoch)]
		err := s.pool.QueryRow(ctx, q, s.unprepared(q, w.ThreadID, w.CheckpointID, w.TaskID, string(doc), w.Epoch)...).Scan(&n, &same, &cpExists, &current, &issued)
		if err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "23503" { // the checkpoint was deleted meanwhile
				return fmt.Errorf("checkpoint %d: %w", w.CheckpointID, store.ErrNotFound)
			}
			return s.db(err)
		}
		if n == 1 || same != nil && *same {
			return nil
		}
		// current is from before a Fence this statement may have waited
		// for; then nothing below holds and the next try sees it.
		if err := check.Fenced(w.ThreadID, w.Epoch, current, issued); err != nil {
			return err
		}
		switch {
		case same != nil:
			return store.ErrConflict
		case !cpExists:
			return fmt.Errorf("checkpoint %d: %w", w.CheckpointID, store.ErrNotFound)
		}
		// A concurrent insert of the same key committed after our snapshot.
	}
	return errors.New("it keeps racing with another writer of the thread; try again")
}

// checkpointCols are a whole row of g (the table or the chain), in the
// order scanCheckpoints reads, with its head snapshot (null but for one
// row of the thread $1). The subqueries are not correlated: PostgreSQL
// runs each once a statement (an InitPlan), not once a row.
const checkpointCols = `g.checkpoint_id, coalesce(g.parent_id, 0), coalesce(g.rerooted_from, 0), g.meta, g.state, g.base, g.rebased, g.blob_refs, g.created_at,
  case when g.checkpoint_id = (select checkpoint_id from graph_heads where thread_id = $1) then (select doc from graph_heads where thread_id = $1) end`

// listedCols are a row as History gives it: no rebased, and state only
// where there is no meta. CASE evaluates state only for those rows, so a
// listing never reads (or detoasts) the states of rows that have meta.
const listedCols = `checkpoint_id, coalesce(parent_id, 0), coalesce(rerooted_from, 0), meta,
  case when meta is null then state end, base, null::json, blob_refs, created_at, null::json`

func (s *Store) checkpoints(ctx context.Context, thread, sql string, args ...any) ([]store.Checkpoint, error) {
	return again(ctx, func() ([]store.Checkpoint, error) { return s.checkpointsOnce(ctx, thread, sql, args...) })
}

func (s *Store) checkpointsOnce(ctx context.Context, thread, sql string, args ...any) ([]store.Checkpoint, error) {
	rows, err := s.pool.Query(ctx, sql, s.unprepared(sql, args...)...)
	if err != nil {
		return nil, s.db(err)
	}
	defer rows.Close()
	var out []store.Checkpoint
	for rows.Next() {
		cp := store.Checkpoint{ThreadID: thread}
		if err := rows.Scan(&cp.ID, &cp.ParentID, &cp.RerootedFrom, &cp.Meta, &cp.State, &cp.Base, &cp.Rebased, &cp.BlobRefs, &cp.CreatedAt, &cp.Head); err != nil {
			return nil, s.db(err)
		}
		if cp.Meta, err = fromJSONB(cp.Meta); err != nil {
			return nil, fmt.Errorf("meta of checkpoint %d %w", cp.ID, err)
		}
		if cp.State, err = fromJSONB(cp.State); err != nil {
			return nil, fmt.Errorf("state of checkpoint %d %w", cp.ID, err)
		}
		if cp.Rebased, err = fromJSONB(cp.Rebased); err != nil {
			return nil, fmt.Errorf("rebased state of checkpoint %d %w", cp.ID, err)
		}
		if cp.Head, err = fromJSONB(cp.Head); err != nil {
			return nil, fmt.Errorf("head snapshot of checkpoint %d %w", cp.ID, err)
		}
		out = append(out, cp)
	}
	return out, s.db(rows.Err())
}

func (s *Store) one(ctx context.Context, thread, sql string, args ...any) (store.Checkpoint, error) {
	cps, err := s.checkpoints(ctx, thread, sql, args...)
	if err != nil {
		return store.Checkpoint{}, err
	}
	if len(cps) == 0 {
		return store.Checkpoint{}, store.ErrNotFound
	}
	return cps[0], nil
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, thread string, id int64) (_ store.Checkpoint, err error) {
	defer s.fail(&err, "get checkpoint %d of thread %v", id, check.Name(thread))
	return s.one(ctx, thread, `select `+checkpointCols+` from graph_checkpoints g where thread_id = $1 and checkpoint_id = $2`, thread, id)
}

// Latest implements store.Store.
func (s *Store) Latest(ctx context.Context, thread string) (_ store.Checkpoint, err error) {
	defer s.fail(&err, "latest checkpoint of thread %v", check.Name(thread))
	return s.one(ctx, thread, `select `+checkpointCols+` from graph_checkpoints g where thread_id = $1 order by checkpoint_id desc limit 1`, thread)
}

// History implements store.Store.
func (s *Store) History(ctx context.Context, thread string, before int64, limit int) (_ []store.Checkpoint, err error) {
	defer s.fail(&err, "history of thread %v", check.Name(thread))
	var lim *int // null: no limit
	if limit > 0 {
		lim = &limit
	}
	const sql = `select ` + listedCols + ` from graph_checkpoints `
	if before > 0 {
		return s.checkpoints(ctx, thread, sql+`where thread_id = $1 and checkpoint_id < $2 order by checkpoint_id desc limit $3`, thread, before, lim)
	}
	return s.checkpoints(ctx, thread, sql+`where thread_id = $1 order by checkpoint_id desc limit $2`, thread, lim)
}

// chainSQL follows parent_id from checkpoint $2 in one statement, up to
// and including the first row that reads on its own: a base, a rebased
// row, the head snapshot's, or one without a parent (the join then finds
// nothing). n numbers the rows newest first. Chain reads it only when
// chainRangeSQL's rows do not hold the chain.
const chainSQL = chainFrom + chainRest

// chainOwnedSQL is chainSQL of a thread tenant $3 owns only (ChainOwned).
const chainOwnedSQL = chainFrom + ownedBy + chainRest

const (
	chainFrom = `
with recursive chain as (
  select 1 as n, g.* from graph_checkpoints g where g.thread_id = $1 and g.checkpoint_id = $2`
	chainRest = `
  union all
  select c.n + 1, g.*
  from chain c join graph_checkpoints g on g.thread_id = $1 and g.checkpoint_id = c.parent_id
  where not c.base and c.rebased is null
    and c.checkpoint_id is distinct from (select checkpoint_id from graph_heads where thread_id = $1)
)
select ` + checkpointCols + ` from chain g order by n`
	// ownedBy is the condition that the thread's owner is $3 (no owner
	// row: the default tenant), a scalar subquery run once a statement.
	ownedBy = `
  and coalesce((select tenant from graph_thread_tenants where thread_id = $1), '` + store.DefaultTenant + `') = $3`
)

// chainRangeSQL reads, newest first, the rows from the nearest one at or
// below $2 that reads on its own up to $2: one range of the primary key,
// the whole chain where its branch forks nowhere in between (Chain walks
// the parents in Go). A new process's first read of a 32-row chain cost
// the server a third less than chainSQL's 32 descents of the key (the
// pages a new session touches first are its costliest). At most
// chainRangeRows rows: where branches interleave more than that, Chain
// reads chainSQL instead.
const chainRangeSQL = chainRangeFrom + chainRangeRest

// chainRangeOwnedSQL is chainRangeSQL of a thread tenant $3 owns only.
const chainRangeOwnedSQL = chainRangeFrom + ownedBy + chainRangeRest

const (
	chainRangeFrom = `select ` + checkpointCols + ` from graph_checkpoints g where g.thread_id = $1 and g.checkpoint_id <= $2`
	chainRangeRest = `
  and g.checkpoint_id >= coalesce((
    select checkpoint_id from graph_checkpoints where thread_id = $1 and checkpoint_id <= $2
      and (base or rebased is not null or parent_id is null
        or checkpoint_id = (select checkpoint_id from graph_heads where thread_id = $1))
    order by checkpoint_id desc limit 1), 0)
order by g.checkpoint_id desc limit ` + chainRangeRows
	chainRangeRows = "128"
)

// Chain implements store.Store in one index range where the branch
// allows (chainRangeSQL), else in one recursive query (chainSQL).
func (s *Store) Chain(ctx context.Context, thread string, id int64) (_ []store.Checkpoint, err error) {
	defer s.fail(&err, "chain of checkpoint %d of thread %v", id, check.Name(thread))
	return s.chain(ctx, thread, id, chainRangeSQL, chainSQL, thread, id)
}

var _ interface {
	ChainOwned(ctx context.Context, thread, tenant string, id int64) ([]store.Checkpoint, error)
} = (*Store)(nil)

// ChainOwned is Chain of a thread tenant owns only (no owner: the default
// tenant's), the owner read in the chain's statements: another tenant's
// thread is store.ErrNotFound. store.Tenanted reads a chain so, with no
// round trip for the owner before it.
func (s *Store) ChainOwned(ctx context.Context, thread, tenant string, id int64) (_ []store.Checkpoint, err error) {
	defer s.fail(&err, "chain of checkpoint %d of thread %v", id, check.Name(thread))
	return s.chain(ctx, thread, id, chainRangeOwnedSQL, chainOwnedSQL, thread, id, tenant)
}

// chain reads the rows of rng (chainRangeSQL's) and walks their parents,
// or reads walk (chainSQL's) when they do not hold the chain.
func (s *Store) chain(ctx context.Context, thread string, id int64, rng, walk string, args ...any) ([]store.Checkpoint, error) {
	span, err := s.checkpoints(ctx, thread, rng, args...)
	if err != nil {
		return nil, err
	}
	if len(span) == 0 || span[0].ID != id {
		return nil, store.ErrNotFound
	}
	if chain, ok := store.WalkChain(span, id); ok {
		return chain, nil
	}
	cps, err := s.checkpoints(ctx, thread, walk, args...)
	if err != nil {
		return nil, err
	}
	if len(cps) == 0 {
		return nil, store.ErrNotFound
	}
	return cps, nil
}

// Messages implements store.Store: the hashes go as one text[] parameter.
func (s *Store) Messages(ctx context.Context, thread string, hashes []string) (_ []store.Message, err error) {
	defer s.fail(&err, "messages of thread %v", check.Name(thread))
	return s.messages(ctx, thread, `select hash, idx, body, checkpoint_id, created_at from graph_messages
where thread_id = $1 and hash = any($2::text[])`, thread, hashes)
}

// MessagesAt implements store.Store.
func (s *Store) MessagesAt(ctx context.Context, thread string, index int64) (_ []store.Message, err error) {
	defer s.fail(&err, "messages #%d of thread %v", index, check.Name(thread))
	return s.messages(ctx, thread, `select hash, idx, body, checkpoint_id, created_at from graph_messages
where thread_id = $1 and idx = $2 order by checkpoint_id, hash`, thread, index)
}

// MessagesIn implements store.Store: one range of graph_messages_idx
// (thread_id, idx).
func (s *Store) MessagesIn(ctx context.Context, thread string, from, to int64) (_ []store.Message, err error) {
	defer s.fail(&err, "messages #%d to #%d of thread %v", from, to, check.Name(thread))
	return s.messages(ctx, thread, `select hash, idx, body, checkpoint_id, created_at from graph_messages
where thread_id = $1 and idx between $2 and $3 order by idx, checkpoint_id, hash`, thread, from, to)
}

// Search implements store.Store through graph_messages_words, a GIN
// index of the words column: store.BodyWords made a tsvector as they are
// (array_to_tsvector: no parser, no dictionary, no locale), so that every
// store finds the same messages. The query is a tsquery of prefixes, cast
// from text as it is (words are letters and digits, each quoted).
func (s *Store) Search(ctx context.Context, thread, query string, limit int) (_ []store.Message, err error) {
	defer s.fail(&err, "search thread %v", check.Name(thread))
	words, err := check.Query(query)
	if err != nil {
		return nil, err
	}
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + w + "':*"
	}
	var lim *int // null: all
	if limit > 0 {
		lim = &limit
	}
	return s.messages(ctx, thread, `select hash, idx, body, checkpoint_id, created_at from graph_messages
where thread_id = $1 and words @@ $2::tsquery order by idx, checkpoint_id, hash limit $3`, thread, strings.Join(q, " & "), lim)
}

func (s *Store) messages(ctx context.Context, thread, sql string, args ...any) ([]store.Message, error) {
	return again(ctx, func() ([]store.Message, error) { return s.messagesOnce(ctx, thread, sql, args...) })
}

func (s *Store) messagesOnce(ctx context.Context, thread, sql string, args ...any) ([]store.Message, error) {
	rows, err := s.pool.Query(ctx, sql, s.unprepared(sql, args...)...)
	if err != nil {
		return nil, s.db(err)
	}
	defer rows.Close()
	var out []store.Message
	for rows.Next() {
		m := store.Message{ThreadID: thread}
		if err := rows.Scan(&m.Hash, &m.Index, &m.Body, &m.CheckpointID, &m.CreatedAt); err != nil {
			return nil, s.db(err)
		}
		out = append(out, m)
	}
	return out, s.db(rows.Err())
}

// Bodies implements store.Store in one statement (one snapshot): blob
// rows have null for the message columns.
func (s *Store) Bodies(ctx context.Context, thread string, messages, blobs []string) (_ []store.Message, _ []store.Blob, err error) {
	defer s.fail(&err, "messages and blobs of thread %v", check.Name(thread))
	q := `select hash, idx, body, checkpoint_id, created_at from graph_messages
where thread_id = $1 and hash = any($2::text[])
union all select hash, null, body, null, null from graph_blobs where thread_id = $1 and hash = any($3::text[])`
	rows, err := s.pool.Query(ctx, q, s.unprepared(q, thread, messages, blobs)...)
	if err != nil {
		return nil, nil, s.db(err)
	}
	defer rows.Close()
	var outM []store.Message
	var outB []store.Blob
	for rows.Next() {
		var hash string
		var idx, checkpoint *int64
		var body []byte
		var created *time.Time
		if err := rows.Scan(&hash, &idx, &body, &checkpoint, &created); err != nil {
			return nil, nil, s.db(err)
		}
		if idx == nil {
			outB = append(outB, store.Blob{Hash: hash, Body: body})
			continue
		}
		m := store.Message{ThreadID: thread, Hash: hash, Index: *idx, Body: body}
		if checkpoint != nil {
			m.CheckpointID = *checkpoint
		}
		if created != nil {
			m.CreatedAt = *created
		}
		outM = append(outM, m)
	}
	return outM, outB, s.db(rows.Err())
}

// Blobs implements store.Store: the hashes go as one text[] parameter.
func (s *Store) Blobs(ctx context.Context, thread string, hashes []string) (_ []store.Blob, err error) {
	defer s.fail(&err, "blobs of thread %v", check.Name(thread))
	q := `select hash, body from graph_blobs where thread_id = $1 and hash = any($2::text[])`
	rows, err := s.pool.Query(ctx, q, s.unprepared(q, thread, hashes)...)
	if err != nil {
		return nil, s.db(err)
	}
	defer rows.Close()
	var out []store.Blob
	for rows.Next() {
		var b store.Blob
		if err := rows.Scan(&b.Hash, &b.Body); err != nil {
			return nil, s.db(err)
		}
		out = append(out, b)
	}
	return out, s.db(rows.Err())
}

// sizeSQL counts a thread's bytes by memory.Store.Size's rule: the octet
// lengths of texts and documents (as jsonb printed those stored before
// version 7), the blob refs'
// hashes, and 8 for each number and time column (5 for a checkpoint: id,
// parent, rerooted_from, base, created_at). Every table is read by its
// primary key's thread prefix.
const sizeSQL = `
select (` + sizeRowsSQL + sizeHeadSQL + `
)::bigint`

// sizeRowsSQL is sizeSQL's count of every table but the head's, which
// graph_sizes keeps; sizeHeadSQL is the head's, which Size reads as it
// is: graph_heads is unlogged, and a server's crash empties it.
const (
	sizeRowsSQL = `
  coalesce((select sum(octet_length(thread_id) + octet_length(state::text) + coalesce(octet_length(meta::text), 0)
                       + coalesce(octet_length(rebased::text), 0) + 5*8
                       + coalesce((select sum(octet_length(r)) from unnest(blob_refs) r), 0))
            from graph_checkpoints where thread_id = $1), 0)
  + coalesce((select sum(octet_length(thread_id) + octet_length(type) + octet_length(payload::text) + 3*8)
              from graph_events where thread_id = $1), 0)
  + coalesce((select sum(octet_length(thread_id) + octet_length(task_id) + octet_length(writes::text) + 2*8)
              from graph_writes where thread_id = $1), 0)
  + coalesce((select sum(octet_length(thread_id) + octet_length(hash) + octet_length(body) + 3*8)
              from graph_messages where thread_id = $1), 0)
  + coalesce((select sum(octet_length(thread_id) + octet_length(hash) + octet_length(body) + 8)
              from graph_blobs where thread_id = $1), 0)
  + coalesce((select sum(octet_length(thread_id) + octet_length(operation_id) + octet_length(body::text) + 8)
              from graph_drafts where thread_id = $1), 0)
  + coalesce((select octet_length(thread_id) + 2*8 from graph_epochs where thread_id = $1), 0)`
	sizeHeadSQL = `
  + coalesce((select octet_length(thread_id) + octet_length(doc::text) + 8 from graph_heads where thread_id = $1), 0)`
)

// recountSizeSQL sets the thread's running total (graph_sizes) to what
// its rows count: Prune and Reseal, which change many rows, count again.
const recountSizeSQL = `insert into graph_sizes as g (thread_id, bytes)
select $1, (` + sizeRowsSQL + `)::bigint
on conflict (thread_id) do update set bytes = excluded.bytes`

// Size implements store.Store: the thread's row of graph_sizes and its
// head's (octet_length reads a stored document's length, not the
// document).
func (s *Store) Size(ctx context.Context, thread string) (n int64, err error) {
	defer s.fail(&err, "size of thread %v", check.Name(thread))
	q := `select (coalesce((select bytes from graph_sizes where thread_id = $1), 0)` + sizeHeadSQL + `)::bigint`
	err = s.pool.QueryRow(ctx, q, s.unprepared(q, thread)...).Scan(&n)
	return n, s.db(err)
}

// CountSize implements store.SizeCounter in one query.
func (s *Store) CountSize(ctx context.Context, thread string) (n int64, err error) {
	defer s.fail(&err, "count the size of thread %v", check.Name(thread))
	err = s.pool.QueryRow(ctx, sizeSQL, s.unprepared(sizeSQL, thread)...).Scan(&n)
	return n, s.db(err)
}

// Writes implements store.Store.
func (s *Store) Writes(ctx context.Context, thread string, checkpointID int64) (_ []store.TaskWrites, err error) {
	defer s.fail(&err, "writes of checkpoint %d of thread %v", checkpointID, check.Name(thread))
	return again(ctx, func() ([]store.TaskWrites, error) { return s.writesOnce(ctx, thread, checkpointID) })
}

func (s *Store) writesOnce(ctx context.Context, thread string, checkpointID int64) (_ []store.TaskWrites, err error) {
	const cols = `select checkpoint_id, task_id, writes, created_at from graph_writes `
	var rows pgx.Rows
	if checkpointID == 0 {
		q := cols + `where thread_id = $1 order by checkpoint_id, task_id`
		rows, err = s.pool.Query(ctx, q, s.unprepared(q, thread)...)
	} else {
		q := cols + `where thread_id = $1 and checkpoint_id = $2 order by task_id`
		rows, err = s.pool.Query(ctx, q, s.unprepared(q, thread, checkpointID)...)
	}
	if err != nil {
		return nil, s.db(err)
	}
	defer rows.Close()
	var out []store.TaskWrites
	for rows.Next() {
		w := store.TaskWrites{ThreadID: thread}
		if err := rows.Scan(&w.CheckpointID, &w.TaskID, &w.Writes, &w.CreatedAt); err != nil {
			return nil, s.db(err)
		}
		if w.Writes, err = fromJSONB(w.Writes); err != nil {
			return nil, fmt.Errorf("writes of task %v %w", check.Name(w.TaskID), err)
		}
		out = append(out, w)
	}
	return out, s.db(rows.Err())
}

// Events implements store.Store.
func (s *Store) Events(ctx context.Context, thread string, checkpointID int64) (_ []store.Event, err error) {
	defer s.fail(&err, "events of checkpoint %d of thread %v", checkpointID, check.Name(thread))
	return again(ctx, func() ([]store.Event, error) { return s.eventsOnce(ctx, thread, checkpointID) })
}

func (s *Store) eventsOnce(ctx context.Context, thread string, checkpointID int64) (_ []store.Event, err error) {
	const cols = `select checkpoint_id, seq, type, payload, created_at from graph_events `
	var rows pgx.Rows
	if checkpointID == 0 {
		q := cols + `where thread_id = $1 order by checkpoint_id, seq`
		rows, err = s.pool.Query(ctx, q, s.unprepared(q, thread)...)
	} else {
		q := cols + `where thread_id = $1 and checkpoint_id = $2 order by seq`
		rows, err = s.pool.Query(ctx, q, s.unprepared(q, thread, checkpointID)...)
	}
	if err != nil {
		return nil, s.db(err)
	}
	defer rows.Close()
	var out []store.Event
	for rows.Next() {
		e := store.Event{ThreadID: thread}
		if err := rows.Scan(&e.CheckpointID, &e.Seq, &e.Type, &e.Payload, &e.CreatedAt); err != nil {
			return nil, s.db(err)
		}
		if e.Payload, err = fromJSONB(e.Payload); err != nil {
			return nil, fmt.Errorf("payload of event %d of checkpoint %d %w", e.Seq, e.CheckpointID, err)
		}
		out = append(out, e)
	}
	return out, s.db(rows.Err())
}

// Threads implements store.Store. UpdatedAt is when the thread's newest
// checkpoint was written.
func (s *Store) Threads(ctx context.Context) (_ []store.Thread, err error) {
	defer s.fail(&err, "list threads")
	return again(ctx, func() ([]store.Thread, error) { return s.threadsOnce(ctx) })
}

// threadCols are a thread's columns with its newest listing, as History
// reads it (listedCols); scanThread reads them.
const threadCols = `t.thread_id, t.checkpoints, t.latest_id, t.updated_at,
  c.checkpoint_id, coalesce(c.parent_id, 0), coalesce(c.rerooted_from, 0), c.meta, case when c.meta is null then c.state end,
  coalesce(c.base, false), c.blob_refs, c.created_at`

func (s *Store) threadsOnce(ctx context.Context) (_ []store.Thread, err error) {
	rows, err := s.pool.Query(ctx, `select `+threadCols+`
from graph_threads t left join graph_checkpoints c on c.thread_id = t.thread_id and c.checkpoint_id = t.latest_id
order by t.thread_id`)
	if err != nil {
		return nil, s.db(err)
	}
	defer rows.Close()
	out := []store.Thread{}
	for rows.Next() {
		t, err := s.scanThread(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, s.db(rows.Err())
}

// recentThreadsSQL is a page of threads after ($1, $2) in (updated_at,
// thread_id) descending order ($1 infinity: from the newest), ids
// compared bytewise (collate "C"), with how many come after it in all
// (the last column, counted in the statement's snapshot). Both read the
// index graph_threads_updated (migration 12), not every row sorted. Only
// the page's rows join their newest checkpoint, and no row is read
// twice: joining the page back to graph_threads hashed every row.
const recentThreadsSQL = `with t as (select thread_id, checkpoints, latest_id, updated_at from graph_threads
  where (updated_at, thread_id collate "C") < ($1::timestamptz, $2::text collate "C")
  order by updated_at desc, thread_id collate "C" desc limit $3)
select ` + threadCols + `, (select count(*) from graph_threads
  where (updated_at, thread_id collate "C") < ($1::timestamptz, $2::text collate "C"))
from t
left join graph_checkpoints c on c.thread_id = t.thread_id and c.checkpoint_id = t.latest_id
order by t.updated_at desc, t.thread_id collate "C" desc`

// RecentThreads implements store.Store.
func (s *Store) RecentThreads(ctx context.Context, before store.ThreadCursor, limit int) (_ []store.Thread, rest int, err error) {
	defer s.fail(&err, "threads updated before thread %v", check.Name(before.ID))
	type page struct {
		ts   []store.Thread
		rest int
	}
	p, err := again(ctx, func() (page, error) {
		// Past every thread: no cursor lists from the newest.
		at, id := pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}, ""
		switch {
		case before.Placed():
			us, cid := before.Micros()
			at, id = pgtype.Timestamptz{Time: time.UnixMicro(us), Valid: true}, cid
		case before.ID != "":
			err := s.pool.QueryRow(ctx, `select updated_at from graph_threads where thread_id = $1`, before.ID).Scan(&at)
			if errors.Is(err, pgx.ErrNoRows) {
				return page{}, store.ErrNotFound
			}
			if err != nil {
				return page{}, s.db(err)
			}
			id = before.ID
		}
		var lim *int
		if limit > 0 {
			lim = &limit
		}
		rows, err := s.pool.Query(ctx, recentThreadsSQL, at, id, lim)
		if err != nil {
			return page{}, s.db(err)
		}
		defer rows.Close()
		var p page
		matched := 0
		for rows.Next() {
			t, err := s.scanThread(rows, &matched)
			if err != nil {
				return page{}, err
			}
			p.ts = append(p.ts, t)
		}
		p.rest = max(matched-len(p.ts), 0)
		return p, s.db(rows.Err())
	})
	return p.ts, p.rest, err
}

// scanThread reads a row of threadCols, then extra's.
func (s *Store) scanThread(rows pgx.Rows, extra ...any) (store.Thread, error) {
	var t store.Thread
	var id *int64
	var created *time.Time
	cp := &t.Latest
	if err := rows.Scan(append([]any{&t.ID, &t.Checkpoints, &t.LatestID, &t.UpdatedAt, &id, &cp.ParentID, &cp.RerootedFrom, &cp.Meta, &cp.State, &cp.Base, &cp.BlobRefs, &created}, extra...)...); err != nil {
		return t, s.db(err)
	}
	if id != nil {
		var err error
		cp.ThreadID, cp.ID, cp.CreatedAt = t.ID, *id, *created
		if cp.Meta, err = fromJSONB(cp.Meta); err != nil {
			return t, fmt.Errorf("meta of checkpoint %d %w", cp.ID, err)
		}
		if cp.State, err = fromJSONB(cp.State); err != nil {
			return t, fmt.Errorf("state of checkpoint %d %w", cp.ID, err)
		}
	}
	return t, nil
}

// deleteFenceSQL starts DeleteThread's transaction: it waits for the
// thread's fenced writes in flight (they hold its epoch row FOR SHARE
// until they commit) and holds back new ones, so that deleteThreadSQL,
// which takes its snapshot after it, sees everything they wrote. Once the
// row is gone those writers are fenced (check.Fenced).
const deleteFenceSQL = `select 1 from graph_epochs where thread_id = $1 for update`

// lockThreadSQL takes the thread's graph_threads row, which a put updates
// before its foreign key checks lock the parent (at the end of its
// statement): DeleteThread and Prune take it before they lock any
// checkpoint, so a put racing them waits or makes them wait, never both
// (a deadlock).
const lockThreadSQL = `select 1 from graph_threads where thread_id = $1 for update`

// lockSizeSQL takes the thread's graph_sizes row next, before any other
// row: a put (after the thread's row), a task's writes and a draft
// update it before their foreign key checks lock the checkpoints, so
// DeleteThread, Prune and Reseal, which change checkpoints and then the
// size, would otherwise deadlock with them.
const lockSizeSQL = `select 1 from graph_sizes where thread_id = $1 for update`

// deleteThreadSQL deletes a thread from every table in one statement;
// writes and events go with their checkpoints (on delete cascade).
// Messages and blobs have no foreign key (they outlive pruned
// checkpoints), so they go explicitly.
const deleteThreadSQL = `
with c as (delete from graph_checkpoints where thread_id = $1 returning 1),
m as (delete from graph_messages where thread_id = $1 returning 1),
b as (delete from graph_blobs where thread_id = $1 returning 1),
d as (delete from graph_drafts where thread_id = $1 returning 1),
e as (delete from graph_epochs where thread_id = $1 returning 1),
h as (delete from graph_heads where thread_id = $1 returning 1),
t as (delete from graph_threads where thread_id = $1),
z as (delete from graph_sizes where thread_id = $1),
o as (delete from graph_thread_tenants where thread_id = $1 returning 1)
select (select count(*) from c) + (select count(*) from m) + (select count(*) from b)
  + (select count(*) from d) + (select count(*) from e) + (select count(*) from h) + (select count(*) from o)`

// DeleteThread implements store.Store. The rows go in one statement; their
// bytes stay in the tables' pages until VACUUM (autovacuum) reuses the
// space, and in the server's WAL and backups, which the server owns: the
// store is no store.Erasing (VACUUM FULL on the graph_ tables rewrites
// them, when a deleted thread must leave no trace on the server's disk).
func (s *Store) DeleteThread(ctx context.Context, thread string) (err error) {
	defer s.fail(&err, "delete thread %v", check.Name(thread))
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.db(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // a no-op after Commit
	var n int64
	b := &pgx.Batch{}
	b.Queue(deleteFenceSQL, thread)
	b.Queue(lockThreadSQL, thread)
	b.Queue(lockSizeSQL, thread)
	b.Queue(deleteThreadSQL, thread).QueryRow(func(row pgx.Row) error { return row.Scan(&n) })
	// Sent at COMMIT: a viewer following the thread says it is gone.
	b.Queue(`select pg_notify($1, $2)`, notifyChannel, notePayload(thread))
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return s.db(err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return s.db(tx.Commit(ctx))
}

// Prune's statements: $1 is the thread, $2 the ids as a bigint[] (one
// bound parameter however many there are).
const (
	pruneNewestSQL = `select max(checkpoint_id) from graph_checkpoints where thread_id = $1`
	// Fenced writers hold the thread's epoch row FOR SHARE until they
	// commit (see fenceOK): locking it waits for those in flight and holds
	// back new ones until the prune commits, so a put cannot come to refer
	// to a blob this prune frees, unseen. Unfenced writers (epoch 0) are
	// not held back.
	pruneFenceSQL = `select 1 from graph_epochs where thread_id = $1 for update`
	// FOR UPDATE: a concurrent put of a child of a doomed checkpoint (or
	// writes for it) waits on its foreign key check until this commits, and
	// then finds the checkpoint gone (ErrNotFound) instead of making it
	// un-deletable.
	pruneFoundSQL = `select checkpoint_id from graph_checkpoints
where thread_id = $1 and checkpoint_id = any($2::bigint[]) order by checkpoint_id for update`
	// The kept rows this prune re-roots, and whether each reads on its own
	// (check.Rebases). Locked as the update below will lock them, so what
	// was checked is what is changed.
	pruneRerootedSQL = `select checkpoint_id, base or rebased is not null from graph_checkpoints
where thread_id = $1 and parent_id = any($2::bigint[]) and checkpoint_id <> all($2::bigint[])
order by checkpoint_id for no key update`
	pruneRerootSQL = `update graph_checkpoints set parent_id = null, rerooted_from = parent_id
where thread_id = $1 and parent_id = any($2::bigint[]) and checkpoint_id <> all($2::bigint[])
returning checkpoint_id, rerooted_from`
	// $2 ids, $3 states, $4 each rebase's blob refs joined by spaces
	// (check.Rebases made them hex): a ragged list in one parameter.
	pruneRebaseSQL = `update graph_checkpoints g
set rebased = r.state::json,
    blob_refs = nullif(coalesce(g.blob_refs, '{}') || string_to_array(r.refs, ' '), '{}')
from unnest($2::bigint[], $3::text[], $4::text[]) as r(id, state, refs)
where g.thread_id = $1 and g.checkpoint_id = r.id`
	// Writes and events go explicitly, before their checkpoints, to count
	// them; the cascade then finds none.
	pruneWritesSQL      = `delete from graph_writes where thread_id = $1 and checkpoint_id = any($2::bigint[])`
	pruneEventsSQL      = `delete from graph_events where thread_id = $1 and checkpoint_id = any($2::bigint[])`
	pruneCheckpointsSQL = `delete from graph_checkpoints where thread_id = $1 and checkpoint_id = any($2::bigint[])`
	// After the deletes and rebases: the blobs no remaining checkpoint
	// (blob_refs, which include the rebases' refs) refers to. The live
	// hashes are collected once (a hash anti-join), not per blob.
	pruneBlobsSQL = `delete from graph_blobs b
where b.thread_id = $1 and not exists (
  select 1 from graph_checkpoints c cross join unnest(c.blob_refs) as r(hash)
  where c.thread_id = $1 and r.hash = b.hash)`
)

// Prune implements store.Store in one transaction of four round trips:
// BEGIN, the checks, one batch of the changes, COMMIT.
func (s *Store) Prune(ctx context.Context, thread string, ids []int64, rebase []store.Rebase) (res store.PruneResult, err error) {
	defer s.fail(&err, "prune thread %v", check.Name(thread))
	ids = append([]int64{}, check.PruneIDs(ids)...) // an empty array rather than null
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return store.PruneResult{}, s.db(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // a no-op after Commit

	checks := &pgx.Batch{}
	var newest *int64
	checks.Queue(pruneFenceSQL, thread)
	checks.Queue(lockThreadSQL, thread)
	checks.Queue(lockSizeSQL, thread)
	checks.Queue(pruneNewestSQL, thread).QueryRow(func(row pgx.Row) error { return row.Scan(&newest) })
	var found []int64
	checks.Queue(pruneFoundSQL, thread, ids).Query(func(rows pgx.Rows) (err error) {
		found, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		return err
	})
	rerooted := map[int64]bool{}
	checks.Queue(pruneRerootedSQL, thread, ids).Query(func(rows pgx.Rows) error {
		var id int64
		var selfContained bool
		_, err := pgx.ForEachRow(rows, []any{&id, &selfContained}, func() error {
			rerooted[id] = selfContained
			return nil
		})
		return err
	})
	if err := tx.SendBatch(ctx, checks).Close(); err != nil {
		return store.PruneResult{}, s.db(err)
	}
	if newest == nil {
		return store.PruneResult{}, store.ErrNotFound
	}
	for i, id := range ids {
		if i >= len(found) || found[i] != id {
			return store.PruneResult{}, check.PruneMissing(id)
		}
	}
	if len(ids) > 0 && ids[len(ids)-1] == *newest {
		return store.PruneResult{}, check.PruneHead(*newest)
	}
	if err := check.Rebases(rebase, rerooted); err != nil {
		return store.PruneResult{}, err
	}
	if len(ids) == 0 {
		return store.PruneResult{}, nil
	}
	rbIDs := make([]int64, len(rebase))
	rbStates := make([]string, len(rebase))
	rbRefs := make([]string, len(rebase))
	for i, r := range rebase {
		doc, err := toJSONB(r.State)
		if err != nil {
			return store.PruneResult{}, fmt.Errorf("rebase of checkpoint %d %w", r.ID, err)
		}
		rbIDs[i], rbStates[i], rbRefs[i] = r.ID, string(doc), strings.Join(r.BlobRefs, " ")
	}

	changes := &pgx.Batch{}
	changes.Queue(pruneRerootSQL, thread, ids).Query(func(rows pgx.Rows) (err error) {
		res.Rerooted, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Reroot, error) {
			var r store.Reroot
			return r, row.Scan(&r.ID, &r.From)
		})
		return err
	})
	if len(rebase) > 0 {
		changes.Queue(pruneRebaseSQL, thread, rbIDs, rbStates, rbRefs)
	}
	// The head snapshot may hold a blob this frees: it goes, and the
	// thread's next run writes one again.
	changes.Queue(`delete from graph_heads where thread_id = $1`, thread)
	var deleted int64
	changes.Queue(pruneWritesSQL, thread, ids).Exec(func(ct pgconn.CommandTag) error {
		res.Writes = int(ct.RowsAffected())
		return nil
	})
	changes.Queue(pruneEventsSQL, thread, ids).Exec(func(ct pgconn.CommandTag) error {
		res.Events = int(ct.RowsAffected())
		return nil
	})
	changes.Queue(pruneCheckpointsSQL, thread, ids).Exec(func(ct pgconn.CommandTag) error {
		deleted = ct.RowsAffected()
		return nil
	})
	changes.Queue(`update graph_threads set checkpoints = checkpoints - $2 where thread_id = $1`, thread, len(ids))
	changes.Queue(pruneBlobsSQL, thread).Exec(func(ct pgconn.CommandTag) error {
		res.Blobs = int(ct.RowsAffected())
		return nil
	})
	changes.Queue(recountSizeSQL, thread)
	if err := tx.SendBatch(ctx, changes).Close(); err != nil {
		return store.PruneResult{}, s.db(err)
	}
	if deleted != int64(len(ids)) { // the rows are locked: this cannot happen
		return store.PruneResult{}, fmt.Errorf("deleted %d checkpoints, expected %d; nothing was pruned, try again", deleted, len(ids))
	}
	if len(res.Rerooted) != len(rerooted) { // the rows are locked: this cannot happen either
		return store.PruneResult{}, fmt.Errorf("re-rooted %d checkpoints, expected %d; nothing was pruned, try again", len(res.Rerooted), len(rerooted))
	}
	if err := tx.Commit(ctx); err != nil {
		return store.PruneResult{}, s.db(err)
	}
	slices.SortFunc(res.Rerooted, func(a, b store.Reroot) int { return cmp.Compare(a.ID, b.ID) })
	res.Deleted = ids
	return res, nil
}

// createDraftSQL inserts a draft unless its key exists or its epoch ($4)
// is not current (see fenceOK; index it by fenced), and returns the stored
// row either way.
// Both selects see the table as it was before the insert, so exactly one
// of them gives a row, unless the write was fenced or a concurrent insert
// of the key committed after this statement began: then none does, and
// the caller asks why (draftEpochSQL) or again.
// Made at the first draft, as putStatements at the first put.
var createDraftSQL = sync.OnceValue(func() [2]string { return [2]string{createDraft(false), createDraft(true)} })

func createDraft(fenced bool) string {
	return `
with ins as (
  insert into graph_drafts (thread_id, operation_id, body)
  select $1, $2, $3::json
  where ` + fenceOK("$4", "$1", fenced) + `
  on conflict do nothing
  returning body, created_at, octet_length(thread_id) + 8 + octet_length(operation_id) + octet_length(body::text) as n
), sz as (
  insert into graph_sizes as g (thread_id, bytes) select $1, n from ins
  on conflict (thread_id) do update set bytes = g.bytes + excluded.bytes
)
select body, created_at, true from ins
union all
select body, created_at, false from graph_drafts where thread_id = $1 and operation_id = $2`
}

const draftEpochSQL = `select coalesce((select epoch from graph_epochs where thread_id = $1), 0), (select issued from graph_epoch_counter)`

// CreateDraft implements store.Drafts.
func (s *Store) CreateDraft(ctx context.Context, d store.Draft) (_ store.Draft, created bool, err error) {
	defer s.fail(&err, "create draft %v of thread %v", check.Name(d.OperationID), check.Name(d.ThreadID))
	if err := check.Draft(d); err != nil {
		return store.Draft{}, false, err
	}
	body, err := toJSONB(d.Body)
	if err != nil {
		return store.Draft{}, false, fmt.Errorf("body %w", err)
	}
	for range 3 {
		stored := store.Draft{ThreadID: d.ThreadID, OperationID: d.OperationID}
		err := s.pool.QueryRow(ctx, createDraftSQL()[fenced(d.Epoch)], d.ThreadID, d.OperationID, body, d.Epoch).Scan(&stored.Body, &stored.CreatedAt, &created)
		if errors.Is(err, pgx.ErrNoRows) {
			// No draft was there and none went in: a fenced (or never
			// handed out) epoch, or a racing insert of the key.
			var current, issued int64
			if err := s.pool.QueryRow(ctx, draftEpochSQL, d.ThreadID).Scan(&current, &issued); err != nil {
				return store.Draft{}, false, s.db(err)
			}
			if err := check.Fenced(d.ThreadID, d.Epoch, current, issued); err != nil {
				return store.Draft{}, false, err
			}
			continue
		}
		if err != nil {
			return store.Draft{}, false, s.db(err)
		}
		if stored.Body, err = fromJSONB(stored.Body); err != nil {
			return store.Draft{}, false, fmt.Errorf("stored body %w", err)
		}
		return stored, created, nil
	}
	return store.Draft{}, false, errors.New("it keeps racing with another writer of the draft; try again")
}

// Draft implements store.Drafts.
func (s *Store) Draft(ctx context.Context, thread, operationID string) (_ store.Draft, err error) {
	defer s.fail(&err, "get draft %v of thread %v", check.Name(operationID), check.Name(thread))
	d := store.Draft{ThreadID: thread, OperationID: operationID}
	q := `select body, created_at from graph_drafts where thread_id = $1 and operation_id = $2`
	err = s.pool.QueryRow(ctx, q, s.unprepared(q, thread, operationID)...).Scan(&d.Body, &d.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Draft{}, store.ErrNotFound
	}
	if err != nil {
		return store.Draft{}, s.db(err)
	}
	if d.Body, err = fromJSONB(d.Body); err != nil {
		return store.Draft{}, fmt.Errorf("body %w", err)
	}
	return d, nil
}

// ListDrafts implements store.Drafts.
func (s *Store) ListDrafts(ctx context.Context, thread string) (_ []store.Draft, err error) {
	defer s.fail(&err, "list drafts of thread %v", check.Name(thread))
	q := `select operation_id, body, created_at from graph_drafts
where thread_id = $1 order by operation_id`
	rows, err := s.pool.Query(ctx, q, s.unprepared(q, thread)...)
	if err != nil {
		return nil, s.db(err)
	}
	defer rows.Close()
	var out []store.Draft
	for rows.Next() {
		d := store.Draft{ThreadID: thread}
		if err := rows.Scan(&d.OperationID, &d.Body, &d.CreatedAt); err != nil {
			return nil, s.db(err)
		}
		if d.Body, err = fromJSONB(d.Body); err != nil {
			return nil, fmt.Errorf("body of draft %v %w", check.Name(d.OperationID), err)
		}
		out = append(out, d)
	}
	return out, s.db(rows.Err())
}

// lockedError says who holds the thread and matches store.ErrLocked.
type lockedError struct{ thread string }

func (e *lockedError) Error() string {
	return fmt.Sprintf("thread %v is being run by another process", check.Name(e.thread))
}
func (e *lockedError) Unwrap() error { return store.ErrLocked }

// lockKey maps a thread to a key of pg_try_advisory_lock(bigint). 64 bits
// of SHA-256 make a collision between two threads practically impossible;
// the one-bigint form does not share keys with the two-int form that the
// migrations use.
func lockKey(thread string) int64 {
	sum := sha256.Sum256([]byte("rewind thread lock\x00" + thread))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// lockSQL takes a thread's lock ($1) and, only when it got it, sets up
// the session for a lock that may be held for as long as a run lasts:
// exempt from idle_session_timeout (PostgreSQL 14+), which would drop the
// lock, and with TCP keepalives ($2-$4 s) so that the server notices
// within about two minutes a client machine that vanished without
// closing the connection. One statement, one round trip; CASE runs the
// settings only for a lock taken, so a refused Lock leaves the session as
// it was.
const lockSQL = `select case when pg_try_advisory_lock($1) then
  (set_config('tcp_keepalives_idle', $2, false) || set_config('tcp_keepalives_interval', $3, false)
   || set_config('tcp_keepalives_count', $4, false)
   || coalesce(case when current_setting('idle_session_timeout', true) is not null
                    then set_config('idle_session_timeout', '0', false) end, '')) is not null
  else false end`

// lockSettings are the settings lockSQL changes; a release RESETs them
// (to the server's, database's and role's defaults and the connection's
// startup options) so that a reused connection is like any other.
// idle_session_timeout exists from PostgreSQL 14 on.
var lockSettings = []string{"tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count", "idle_session_timeout"}

// unlockBatch releases the lock on key and resets the session's settings,
// in one round trip.
func unlockBatch(conn *pgx.Conn, key int64, was *bool) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(`select pg_advisory_unlock($1)`, key).QueryRow(func(row pgx.Row) error { return row.Scan(was) })
	settings := lockSettings
	if serverMajor(conn) < 14 {
		settings = settings[:3]
	}
	for _, name := range settings {
		b.Queue(`reset ` + name)
	}
	return b
}

// serverMajor is the server's major version ("15.18 (Debian ...)" is 15).
func serverMajor(conn *pgx.Conn) int {
	v := conn.PgConn().ParameterStatus("server_version")
	end := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(v)
	}
	n, _ := strconv.Atoi(v[:end])
	return n
}

// maxSpare bounds the released lock connections kept for reuse: a process
// usually runs one thread at a time.
const maxSpare = 4

// Lock implements store.Store. The lock is a session advisory lock on a
// connection of its own for as long as it is held: if this process dies,
// its connection drops and the server frees the lock.
//
// The connection is not a pool connection while the lock is held (it is
// hijacked): a process holding as many locks as the pool has connections
// would otherwise starve every other call. Released, after a successful
// unlock, it is kept as a spare for the next Lock, so a run costs no new
// connection: one round trip to lock, one to release.
func (s *Store) Lock(ctx context.Context, thread string) (func() error, error) {
	key := lockKey(thread)
	conn, ok, err := s.tryLock(ctx, key)
	if err != nil && serverClosed(err) && ctx.Err() == nil {
		// A turn's first statement, on a connection the server closed (a
		// restart, pg_terminate_backend): every connection of that server
		// is gone (s.db dropped them), and a session lock dies with its
		// session, so the lock is tried once more, on a new connection.
		_ = s.db(err)
		conn, ok, err = s.tryLock(ctx, key)
	}
	if err != nil {
		return nil, s.target.wrap(s.db(err), "lock thread %v", check.Name(thread))
	}
	if !ok {
		return nil, &lockedError{thread: thread}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = conn.Close(context.Background()) // drops the lock with the session
		return nil, fmt.Errorf("postgres store: lock thread %v: the store is closed", check.Name(thread))
	}
	s.locks[conn] = struct{}{}
	s.mu.Unlock()

	var once sync.Once
	var relErr error
	release := func() error {
		once.Do(func() {
			s.mu.Lock()
			_, held := s.locks[conn]
			delete(s.locks, conn)
			s.mu.Unlock()
			if !held { // Close already dropped it
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			// Unlock before the connection is reused or closed: the server
			// frees a closed session's locks only when its backend has
			// exited, which may be after a next Lock call.
			var was bool
			err := conn.SendBatch(ctx, unlockBatch(conn, key, &was)).Close()
			switch {
			case err != nil && was:
				// Unlocked, but a reset failed: the lock is gone, the
				// session is not reused.
				_ = conn.Close(ctx)
			case err != nil:
				_ = conn.Close(ctx)
				relErr = s.target.wrap(s.db(err), "release lock of thread %v: lost the connection that held it, so the server had already released it", check.Name(thread))
			case !was:
				_ = conn.Close(ctx) // a session in a state we did not make: not reused
				relErr = fmt.Errorf("postgres store: release lock of thread %v: it was no longer held", check.Name(thread))
			default:
				s.putSpare(conn)
			}
		})
		return relErr
	}
	return release, nil
}

// tryLock runs lockSQL on a spare lock connection or, when there is none,
// on a pool connection, which it hijacks once it holds the lock. ok false
// is a lock held elsewhere; the connection is then back where it came
// from. On an error the connection is closed: a session lock may have
// been taken before it failed, and a closed session drops it.
func (s *Store) tryLock(ctx context.Context, key int64) (conn *pgx.Conn, ok bool, err error) {
	if err := ctx.Err(); err != nil { // before a spare is pinged in vain
		return nil, false, err
	}
	if conn = s.takeSpare(ctx); conn != nil {
		if err := conn.QueryRow(ctx, lockSQL, key, "60", "10", "6").Scan(&ok); err != nil {
			if pgconn.SafeToRetry(err) { // never sent (say, a cancelled context): still a good spare
				s.putSpare(conn)
			} else {
				_ = conn.Close(context.WithoutCancel(ctx))
			}
			return nil, false, err
		}
		if !ok {
			s.putSpare(conn)
			return nil, false, nil
		}
		return conn, true, nil
	}
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, false, err
	}
	if err := pc.QueryRow(ctx, lockSQL, key, "60", "10", "6").Scan(&ok); err != nil {
		if !pgconn.SafeToRetry(err) {
			_ = pc.Conn().Close(context.WithoutCancel(ctx))
		}
		pc.Release() // the pool drops a closed connection
		return nil, false, err
	}
	if !ok {
		pc.Release()
		return nil, false, nil
	}
	return pc.Hijack(), true, nil
}

// takeSpare returns the most recently released lock connection that is
// still good, or nil. Like pgxpool, it pings one that sat idle for more
// than a second (a server restart or idle_session_timeout may have closed
// it), and closes one idle for longer than the pool keeps connections.
func (s *Store) takeSpare(ctx context.Context) *pgx.Conn {
	for {
		s.mu.Lock()
		if len(s.spare) == 0 {
			s.mu.Unlock()
			return nil
		}
		sc := s.spare[len(s.spare)-1]
		s.spare = s.spare[:len(s.spare)-1]
		s.mu.Unlock()
		idle := time.Since(sc.since)
		switch {
		case sc.conn.IsClosed():
			continue
		case s.maxIdle > 0 && idle > s.maxIdle:
		case idle <= time.Second:
			return sc.conn
		default:
			if err := sc.conn.Ping(ctx); err == nil {
				return sc.conn
			}
		}
		_ = sc.conn.Close(context.WithoutCancel(ctx))
		if ctx.Err() != nil {
			return nil // the caller's query reports it
		}
	}
}

// putSpare keeps an unlocked lock connection for the next Lock, or closes
// it when the store is closed or has spares enough.
func (s *Store) putSpare(conn *pgx.Conn) {
	s.mu.Lock()
	if !s.closed && len(s.spare) < maxSpare && !conn.IsClosed() {
		s.spare = append(s.spare, spareConn{conn: conn, since: time.Now()})
		conn = nil
	}
	s.mu.Unlock()
	if conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = conn.Close(ctx)
	}
}
