// Package postgres is the PostgreSQL backend of store.Store: the shared
// store for several processes or machines working on the same threads.
//
// Checkpoints live in graph_checkpoints (the seed's table), pending task
// writes in graph_writes and events in graph_events, all legible in psql.
// The package owns those tables and versions them itself (embedded
// migrations, recorded in rewind_schema_migrations); it refuses a database
// whose tables it did not create, or whose store schema is newer than it.
//
// Documents are stored as jsonb. The JSON escapes jsonb refuses (\u0000
// and unpaired surrogates) are kept under a private-use marker rune, U+E000,
// and given back as the same JSON; see toJSONB.
//
// Several processes may Open the same database at once: migrations are
// serialised by an advisory lock.
//
// Lock holds a session advisory lock on a connection of its own, so a
// writer that dies loses its connection and with it the lock.
package postgres

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"rewind/store"
	"rewind/store/internal/check"
)

// Store is a store.Store on a PostgreSQL database.
type Store struct {
	pool   *pgxpool.Pool
	target target
	hook   atomic.Pointer[func(stage string)]

	mu     sync.Mutex
	locks  map[*pgx.Conn]struct{} // connections holding a thread lock
	closed bool
}

var (
	_ store.Store  = (*Store)(nil)
	_ store.Drafts = (*Store)(nil)
)

// Open connects to the database at url (postgres://user:pass@host:port/db),
// brings the store's tables up to date and returns the store. Each
// connection attempt gives up after 5 s unless the URL sets connect_timeout.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgconn masks the password in its message.
		return nil, fmt.Errorf("postgres store: bad URL (want postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable]): %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout <= 0 {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "rewind" // for pg_stat_activity
	}
	t := newTarget(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, t.wrap(err, "cannot set up a connection pool for %s", t)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, t.connectError(ctx, err)
	}
	s := &Store{pool: pool, target: t, locks: map[*pgx.Conn]struct{}{}}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Close releases every lock still held and closes the connections.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	locks := s.locks
	s.locks = nil
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for c := range locks {
		_ = c.Close(ctx) // the server drops the lock with the session
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
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
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

// fenceOK is true when the write's epoch ($N) is 0 (unfenced) or the
// thread's current one. FOR SHARE holds the epoch row until COMMIT, so a
// concurrent Fence waits for this write, or this write waits for the Fence
// and then sees its epoch. CASE keeps unfenced writes from touching it.
func fenceOK(n int) string {
	return fmt.Sprintf(`case when $%[1]d::bigint = 0 then true
       else $%[1]d = (select epoch from graph_epochs where thread_id = $1 for share) end`, n)
}

// putCheckpointSQL inserts the checkpoint and its events in one statement,
// hence one transaction and one round trip. The checkpoint goes in only
// when it is newer than the thread's newest, its parent exists and its
// epoch is current; events go in only with it. On zero rows the caller
// asks why.
var putCheckpointSQL = `
with cp as (
  insert into graph_checkpoints (thread_id, checkpoint_id, parent_id, state)
  select $1, $2, $3, $4::jsonb
  where not exists (select 1 from graph_checkpoints where thread_id = $1 and checkpoint_id >= $2)
    and ($3::bigint is null or exists (select 1 from graph_checkpoints where thread_id = $1 and checkpoint_id = $3))
    and ` + fenceOK(8) + `
  on conflict do nothing
  returning created_at
), ev as (
  insert into graph_events (thread_id, checkpoint_id, seq, type, payload, created_at)
  select $1, $2, e.seq, e.type, e.payload::jsonb, cp.created_at
  from cp, unnest($5::int[], $6::text[], $7::text[]) as e(seq, type, payload)
)
select count(*) from cp`

// whyNotSQL tells why putCheckpointSQL inserted nothing: the newest id,
// whether a checkpoint with this id holds the same parent and state, the
// same events (check.Put made seqs unique), whether the parent exists, and
// the thread's writer epoch. A re-rooted checkpoint's parent matches both
// null and the parent it had (check.SameParent).
const whyNotSQL = `
select
  (select max(checkpoint_id) from graph_checkpoints where thread_id = $1),
  (select (parent_id is not distinct from $3::bigint or parent_id is null and rerooted_from is not distinct from $3::bigint)
          and state = $4::jsonb
     from graph_checkpoints where thread_id = $1 and checkpoint_id = $2),
  (select count(*) from graph_events where thread_id = $1 and checkpoint_id = $2) = cardinality($5::int[])
    and not exists (
      select e.seq, e.type, e.payload::jsonb from unnest($5::int[], $6::text[], $7::text[]) as e(seq, type, payload)
      except
      select seq, type, payload from graph_events where thread_id = $1 and checkpoint_id = $2),
  $3::bigint is null or exists (select 1 from graph_checkpoints where thread_id = $1 and checkpoint_id = $3),
  coalesce((select epoch from graph_epochs where thread_id = $1), 0)`

// PutCheckpoint implements store.Store.
func (s *Store) PutCheckpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) (err error) {
	defer s.fail(&err, "put checkpoint %d of thread %v", cp.ID, check.Name(cp.ThreadID))
	if events, err = check.Put(cp, events); err != nil {
		return err
	}
	state, err := toJSONB(cp.State)
	if err != nil {
		return fmt.Errorf("state %w", err)
	}
	var parent *int64
	if cp.ParentID != 0 {
		parent = &cp.ParentID
	}
	seqs := make([]int32, len(events))
	types := make([]string, len(events))
	payloads := make([]string, len(events))
	for i, e := range events {
		if e.Seq > math.MaxInt32 {
			return check.Invalid("event seq %d is too large", e.Seq)
		}
		p, err := toJSONB(e.Payload)
		if err != nil {
			return fmt.Errorf("payload of event %d %w", e.Seq, err)
		}
		seqs[i], types[i], payloads[i] = int32(e.Seq), e.Type, string(p)
	}
	args := []any{cp.ThreadID, cp.ID, parent, state, seqs, types, payloads}

	// More than one try covers a race with a concurrent delete, insert or
	// fence that made the insert skip but left nothing to explain it.
	for range 3 {
		n, err := s.insertCheckpoint(ctx, append(args, cp.Epoch))
		if err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "23503" { // the parent was deleted meanwhile
				return fmt.Errorf("parent checkpoint %d: %w", cp.ParentID, store.ErrNotFound)
			}
			return s.db(err)
		}
		if n == 1 {
			return nil
		}
		var newest *int64
		var same *bool
		var sameEvents, parentOK bool
		var current int64
		if err := s.pool.QueryRow(ctx, whyNotSQL, args...).Scan(&newest, &same, &sameEvents, &parentOK, &current); err != nil {
			return s.db(err)
		}
		if same != nil && *same && sameEvents {
			return nil
		}
		if err := check.Fenced(cp.ThreadID, cp.Epoch, current); err != nil {
			return err
		}
		switch {
		case same != nil:
			return store.ErrConflict
		case newest != nil && *newest > cp.ID:
			return fmt.Errorf("the newest is %d: %w", *newest, store.ErrStale)
		case !parentOK:
			return fmt.Errorf("parent checkpoint %d: %w", cp.ParentID, store.ErrNotFound)
		}
	}
	return errors.New("it keeps racing with another writer of the thread; try again")
}

// insertCheckpoint runs putCheckpointSQL: on its own (one statement, one
// round trip), or with a hook set, in an explicit transaction so the hook
// runs after the rows are written and before COMMIT.
func (s *Store) insertCheckpoint(ctx context.Context, args []any) (n int, err error) {
	hook := s.hook.Load()
	if hook == nil {
		err = s.pool.QueryRow(ctx, putCheckpointSQL, args...).Scan(&n)
		return n, err
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // a no-op after Commit
	if err := tx.QueryRow(ctx, putCheckpointSQL, args...).Scan(&n); err != nil || n == 0 {
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

// Fence implements store.Store.
func (s *Store) Fence(ctx context.Context, thread string) (epoch int64, err error) {
	defer s.fail(&err, "fence thread %v", check.Name(thread))
	if err := check.Text("thread id", thread); err != nil {
		return 0, err
	}
	err = s.pool.QueryRow(ctx, `insert into graph_epochs as g (thread_id, epoch) values ($1, 1)
on conflict (thread_id) do update set epoch = g.epoch + 1, fenced_at = now()
returning epoch`, thread).Scan(&epoch)
	return epoch, s.db(err)
}

// putWritesSQL inserts one task's writes if the checkpoint exists and the
// epoch is current (see fenceOK). The outer select sees the tables as they
// were before the insert, so it shows an existing row (to compare) but not
// the one just inserted.
var putWritesSQL = `
with w as (
  insert into graph_writes (thread_id, checkpoint_id, task_id, writes)
  select $1, $2, $3, $4::jsonb
  where exists (select 1 from graph_checkpoints where thread_id = $1 and checkpoint_id = $2)
    and ` + fenceOK(5) + `
  on conflict do nothing
  returning 1
)
select
  (select count(*) from w),
  (select writes = $4::jsonb from graph_writes where thread_id = $1 and checkpoint_id = $2 and task_id = $3),
  exists (select 1 from graph_checkpoints where thread_id = $1 and checkpoint_id = $2),
  coalesce((select epoch from graph_epochs where thread_id = $1), 0)`

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
		var current int64
		err := s.pool.QueryRow(ctx, putWritesSQL, w.ThreadID, w.CheckpointID, w.TaskID, doc, w.Epoch).Scan(&n, &same, &cpExists, &current)
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
		if err := check.Fenced(w.ThreadID, w.Epoch, current); err != nil {
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

const selectCheckpoints = `select checkpoint_id, coalesce(parent_id, 0), coalesce(rerooted_from, 0), state, created_at from graph_checkpoints `

func (s *Store) checkpoints(ctx context.Context, thread, where string, args ...any) ([]store.Checkpoint, error) {
	rows, err := s.pool.Query(ctx, selectCheckpoints+where, args...)
	if err != nil {
		return nil, s.db(err)
	}
	defer rows.Close()
	var out []store.Checkpoint
	for rows.Next() {
		cp := store.Checkpoint{ThreadID: thread}
		if err := rows.Scan(&cp.ID, &cp.ParentID, &cp.RerootedFrom, &cp.State, &cp.CreatedAt); err != nil {
			return nil, s.db(err)
		}
		if cp.State, err = fromJSONB(cp.State); err != nil {
			return nil, fmt.Errorf("state of checkpoint %d %w", cp.ID, err)
		}
		out = append(out, cp)
	}
	return out, s.db(rows.Err())
}

func (s *Store) one(ctx context.Context, thread, where string, args ...any) (store.Checkpoint, error) {
	cps, err := s.checkpoints(ctx, thread, where, args...)
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
	return s.one(ctx, thread, `where thread_id = $1 and checkpoint_id = $2`, thread, id)
}

// Latest implements store.Store.
func (s *Store) Latest(ctx context.Context, thread string) (_ store.Checkpoint, err error) {
	defer s.fail(&err, "latest checkpoint of thread %v", check.Name(thread))
	return s.one(ctx, thread, `where thread_id = $1 order by checkpoint_id desc limit 1`, thread)
}

// History implements store.Store.
func (s *Store) History(ctx context.Context, thread string, before int64, limit int) (_ []store.Checkpoint, err error) {
	defer s.fail(&err, "history of thread %v", check.Name(thread))
	var lim *int // null: no limit
	if limit > 0 {
		lim = &limit
	}
	if before > 0 {
		return s.checkpoints(ctx, thread, `where thread_id = $1 and checkpoint_id < $2 order by checkpoint_id desc limit $3`, thread, before, lim)
	}
	return s.checkpoints(ctx, thread, `where thread_id = $1 order by checkpoint_id desc limit $2`, thread, lim)
}

// Writes implements store.Store.
func (s *Store) Writes(ctx context.Context, thread string, checkpointID int64) (_ []store.TaskWrites, err error) {
	defer s.fail(&err, "writes of checkpoint %d of thread %v", checkpointID, check.Name(thread))
	rows, err := s.pool.Query(ctx, `select task_id, writes, created_at from graph_writes
where thread_id = $1 and checkpoint_id = $2 order by task_id`, thread, checkpointID)
	if err != nil {
		return nil, s.db(err)
	}
	defer rows.Close()
	var out []store.TaskWrites
	for rows.Next() {
		w := store.TaskWrites{ThreadID: thread, CheckpointID: checkpointID}
		if err := rows.Scan(&w.TaskID, &w.Writes, &w.CreatedAt); err != nil {
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
	const cols = `select checkpoint_id, seq, type, payload, created_at from graph_events `
	var rows pgx.Rows
	if checkpointID == 0 {
		rows, err = s.pool.Query(ctx, cols+`where thread_id = $1 order by checkpoint_id, seq`, thread)
	} else {
		rows, err = s.pool.Query(ctx, cols+`where thread_id = $1 and checkpoint_id = $2 order by seq`, thread, checkpointID)
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
	rows, err := s.pool.Query(ctx, `select thread_id, count(*), max(checkpoint_id), max(created_at)
from graph_checkpoints group by thread_id order by thread_id`)
	if err != nil {
		return nil, s.db(err)
	}
	defer rows.Close()
	out := []store.Thread{}
	for rows.Next() {
		var t store.Thread
		if err := rows.Scan(&t.ID, &t.Checkpoints, &t.LatestID, &t.UpdatedAt); err != nil {
			return nil, s.db(err)
		}
		out = append(out, t)
	}
	return out, s.db(rows.Err())
}

// deleteThreadSQL deletes a thread from every table in one statement, hence
// one transaction; writes and events go with their checkpoints (on delete
// cascade).
const deleteThreadSQL = `
with c as (delete from graph_checkpoints where thread_id = $1 returning 1),
d as (delete from graph_drafts where thread_id = $1 returning 1),
e as (delete from graph_epochs where thread_id = $1 returning 1)
select (select count(*) from c) + (select count(*) from d) + (select count(*) from e)`

// DeleteThread implements store.Store.
func (s *Store) DeleteThread(ctx context.Context, thread string) (err error) {
	defer s.fail(&err, "delete thread %v", check.Name(thread))
	var n int64
	if err := s.pool.QueryRow(ctx, deleteThreadSQL, thread).Scan(&n); err != nil {
		return s.db(err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Prune's statements: $1 is the thread, $2 the ids as a bigint[] (one
// bound parameter however many there are).
const (
	pruneNewestSQL = `select max(checkpoint_id) from graph_checkpoints where thread_id = $1`
	// FOR UPDATE: a concurrent put of a child of a doomed checkpoint (or
	// writes for it) waits on its foreign key check until this commits, and
	// then finds the checkpoint gone (ErrNotFound) instead of making it
	// un-deletable.
	pruneFoundSQL = `select checkpoint_id from graph_checkpoints
where thread_id = $1 and checkpoint_id = any($2::bigint[]) order by checkpoint_id for update`
	pruneRerootSQL = `update graph_checkpoints set parent_id = null, rerooted_from = parent_id
where thread_id = $1 and parent_id = any($2::bigint[]) and checkpoint_id <> all($2::bigint[])
returning checkpoint_id, rerooted_from`
	// Writes and events go explicitly, before their checkpoints, to count
	// them; the cascade then finds none.
	pruneWritesSQL      = `delete from graph_writes where thread_id = $1 and checkpoint_id = any($2::bigint[])`
	pruneEventsSQL      = `delete from graph_events where thread_id = $1 and checkpoint_id = any($2::bigint[])`
	pruneCheckpointsSQL = `delete from graph_checkpoints where thread_id = $1 and checkpoint_id = any($2::bigint[])`
)

// Prune implements store.Store in one transaction of four round trips:
// BEGIN, the checks, one batch of the changes, COMMIT.
func (s *Store) Prune(ctx context.Context, thread string, ids []int64) (res store.PruneResult, err error) {
	defer s.fail(&err, "prune thread %v", check.Name(thread))
	ids = append([]int64{}, check.PruneIDs(ids)...) // an empty array rather than null
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return store.PruneResult{}, s.db(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // a no-op after Commit

	checks := &pgx.Batch{}
	var newest *int64
	checks.Queue(pruneNewestSQL, thread).QueryRow(func(row pgx.Row) error { return row.Scan(&newest) })
	var found []int64
	checks.Queue(pruneFoundSQL, thread, ids).Query(func(rows pgx.Rows) (err error) {
		found, err = pgx.CollectRows(rows, pgx.RowTo[int64])
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
	if len(ids) == 0 {
		return store.PruneResult{}, nil
	}

	changes := &pgx.Batch{}
	changes.Queue(pruneRerootSQL, thread, ids).Query(func(rows pgx.Rows) (err error) {
		res.Rerooted, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Reroot, error) {
			var r store.Reroot
			return r, row.Scan(&r.ID, &r.From)
		})
		return err
	})
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
	if err := tx.SendBatch(ctx, changes).Close(); err != nil {
		return store.PruneResult{}, s.db(err)
	}
	if deleted != int64(len(ids)) { // the rows are locked: this cannot happen
		return store.PruneResult{}, fmt.Errorf("deleted %d checkpoints, expected %d; nothing was pruned, try again", deleted, len(ids))
	}
	if err := tx.Commit(ctx); err != nil {
		return store.PruneResult{}, s.db(err)
	}
	slices.SortFunc(res.Rerooted, func(a, b store.Reroot) int { return cmp.Compare(a.ID, b.ID) })
	res.Deleted = ids
	return res, nil
}

// createDraftSQL inserts a draft unless its key exists and returns the
// stored row either way. Both selects see the table as it was before the
// insert, so exactly one of them gives a row, unless a concurrent insert
// of the key committed after this statement began: then none does, and
// the caller asks again.
const createDraftSQL = `
with ins as (
  insert into graph_drafts (thread_id, operation_id, body)
  values ($1, $2, $3::jsonb)
  on conflict do nothing
  returning body, created_at
)
select body, created_at, true from ins
union all
select body, created_at, false from graph_drafts where thread_id = $1 and operation_id = $2`

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
		err := s.pool.QueryRow(ctx, createDraftSQL, d.ThreadID, d.OperationID, body).Scan(&stored.Body, &stored.CreatedAt, &created)
		if errors.Is(err, pgx.ErrNoRows) {
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
	err = s.pool.QueryRow(ctx, `select body, created_at from graph_drafts where thread_id = $1 and operation_id = $2`,
		thread, operationID).Scan(&d.Body, &d.CreatedAt)
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
	rows, err := s.pool.Query(ctx, `select operation_id, body, created_at from graph_drafts
where thread_id = $1 order by operation_id`, thread)
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

// Lock implements store.Store. The lock is a session advisory lock on a
// connection taken out of the pool for as long as it is held: if this
// process dies, its connection drops and the server frees the lock.
func (s *Store) Lock(ctx context.Context, thread string) (func() error, error) {
	key := lockKey(thread)
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, s.target.wrap(s.db(err), "lock thread %v", check.Name(thread))
	}
	var ok bool
	if err := pc.QueryRow(ctx, `select pg_try_advisory_lock($1)`, key).Scan(&ok); err != nil {
		pc.Release()
		return nil, s.target.wrap(s.db(err), "lock thread %v", check.Name(thread))
	}
	if !ok {
		pc.Release()
		return nil, &lockedError{thread: thread}
	}
	// The session may sit idle for as long as the run lasts: exempt it from
	// idle_session_timeout (PostgreSQL 14+), which would drop the lock, and
	// let the server notice within about two minutes a client machine
	// that vanished without closing the connection.
	if _, err := pc.Exec(ctx, `select set_config('tcp_keepalives_idle', $1, false),
  set_config('tcp_keepalives_interval', $2, false), set_config('tcp_keepalives_count', $3, false),
  case when current_setting('idle_session_timeout', true) is not null
       then set_config('idle_session_timeout', '0', false) end`, "60", "10", "6"); err != nil {
		pc.Conn().Close(context.WithoutCancel(ctx)) // drops the lock with the session
		pc.Release()
		return nil, s.target.wrap(s.db(err), "lock thread %v", check.Name(thread))
	}
	conn := pc.Hijack()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = conn.Close(context.Background())
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
			// Unlock before closing: the server frees a closed session's
			// locks only when its backend has exited, which may be after a
			// next Lock call.
			var was bool
			err := conn.QueryRow(ctx, `select pg_advisory_unlock($1)`, key).Scan(&was)
			_ = conn.Close(ctx)
			switch {
			case err != nil:
				relErr = s.target.wrap(s.db(err), "release lock of thread %v: lost the connection that held it, so the server had already released it", check.Name(thread))
			case !was:
				relErr = fmt.Errorf("postgres store: release lock of thread %v: it was no longer held", check.Name(thread))
			}
		})
		return relErr
	}
	return release, nil
}
