package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"rewind/store"
	"rewind/store/internal/check"
)

// Writes: PutCheckpoint and PutWrites in BEGIN IMMEDIATE transactions,
// the fencing epochs they check, and the mid-transaction hook.

// begin starts a write transaction (BEGIN IMMEDIATE), or says why this
// process cannot write the store. It runs ready first, if given, when
// the write pool's connection is free (pool.ready).
func (s *Store) begin(ctx context.Context, ready ...func() error) (*sql.Tx, error) {
	if s.readOnly != "" {
		return nil, errors.New(s.readOnly)
	}
	for _, r := range ready {
		if err := r(); err != nil {
			return nil, err
		}
	}
	if s.unwiped.Load() {
		s.wipeWAL(ctx)
	}
	return s.w.BeginTx(ctx, nil)
}

// quiet gives the statements of a write transaction ctx without its
// cancel: the driver starts a goroutine to watch a cancellable context
// for every statement, a tenth of a put's CPU. The transaction keeps ctx
// (database/sql rolls it back once ctx is done, and the statements then
// fail), and the caller checks cancelled before COMMIT, so a cancelled
// write still commits nothing.
func quiet(ctx context.Context) (_ context.Context, cancelled func() error) {
	return context.WithoutCancel(ctx), ctx.Err
}

// in runs one of the write pool's statements inside tx.
func (s *Store) in(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	return tx.StmtContext(ctx, s.w.stmts[query])
}

func (s *Store) PutCheckpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) (err error) {
	defer s.wrap(ctx, &err, "put checkpoint %d of thread %v", cp.ID, check.Name(cp.ThreadID))
	if events, err = check.Put(cp, events); err != nil {
		return err
	}
	tx, err := s.begin(ctx, func() error {
		return errors.Join(s.w.ready(ctx, putEvents, len(events)), s.w.ready(ctx, putMessages, len(cp.Messages)),
			s.w.ready(ctx, putBlobs, len(cp.Blobs)))
	})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ctx, cancelled := quiet(ctx)
	// One statement reads all that the put decides by (the transaction
	// holds the write lock: nothing changes between the decisions).
	var newest sql.NullInt64
	var ep epochs
	var parentOK, settle bool
	if err := s.in(ctx, tx, sqlPutCheckpointState).QueryRowContext(ctx, cp.ThreadID, cp.ParentID, cp.Settles).Scan(&newest, &ep.current, &ep.issued, &parentOK, &settle); err != nil {
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
	if _, err := s.in(ctx, tx, sqlPutCheckpoint).ExecContext(ctx, cp.ThreadID, cp.ID, nullID(cp.ParentID), cp.Base, now,
		nullText(cp.Meta), refs, string(cp.State)); err != nil {
		return err
	}
	if len(cp.Head) > 0 {
		if _, err := s.in(ctx, tx, sqlPutHead).ExecContext(ctx, cp.ThreadID, cp.ID, string(cp.Head)); err != nil {
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
	if err := s.insertRows(ctx, tx, putBlobs, []any{cp.ThreadID, now}, len(cp.Blobs), func(args []any, i int) []any {
		b := cp.Blobs[i]
		return append(args, b.Hash, string(b.Body))
	}); err != nil {
		return err
	}
	if cp.Settles != 0 && settle {
		// Folded into this checkpoint's state: a resume must not apply them again.
		if _, err := s.in(ctx, tx, sqlSettle).ExecContext(ctx, cp.ThreadID, cp.Settles); err != nil {
			return err
		}
	}
	if hook := s.hook.Load(); hook != nil {
		(*hook)("checkpoint-written")
	}
	return s.commit(tx, cancelled)
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
// row cost a put more than its rows did), once pool.ready prepared them.
// row appends row i's own parameters.
func (s *Store) insertRows(ctx context.Context, tx *sql.Tx, q rowsInsert, fixed []any, n int, row func(args []any, i int) []any) error {
	for from := 0; from < n; from += maxRows {
		count := min(n-from, maxRows)
		args := append(make([]any, 0, len(fixed)+count*q.width), fixed...)
		for i := from; i < from+count; i++ {
			args = row(args, i)
		}
		if _, err := tx.StmtContext(ctx, s.w.rows[q.kind][count-1].Load()).ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
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
	if _, err := s.in(ctx, tx, sqlFence).ExecContext(ctx, thread, epoch, s.now()); err != nil {
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
	ctx, cancelled := quiet(ctx)
	var old []byte
	var ep epochs
	var cpOK bool
	if err := s.in(ctx, tx, sqlPutWritesState).QueryRowContext(ctx, w.ThreadID, w.CheckpointID, w.TaskID).Scan(&old, &ep.current, &ep.issued, &cpOK); err != nil {
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
	if _, err := s.in(ctx, tx, sqlPutWrites).ExecContext(ctx, w.ThreadID, w.CheckpointID, w.TaskID, string(w.Writes), s.now()); err != nil {
		return err
	}
	return s.commit(tx, cancelled)
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

// commit ends a write: COMMIT, unless its context was cancelled meanwhile
// (see quiet), and a count towards the next WAL checkpoint.
func (s *Store) commit(tx *sql.Tx, cancelled func() error) error {
	if err := cancelled(); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.committed()
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
