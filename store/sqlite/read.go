package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"rewind/store"
	"rewind/store/internal/check"
)

// Reads: checkpoints, messages, blobs, writes, events, threads and size.

func (s *Store) checkpoints(ctx context.Context, thread, query string, args ...any) ([]store.Checkpoint, error) {
	return s.scan(ctx, thread, false, 0, query, args...)
}

// scan reads the rows of query, which selects cpColumns and then state,
// rebased and the head snapshot, or, listed, the state alone (sqlHistory:
// two columns fewer for each of a whole-chain log's 40,000 rows). size is
// how many rows to make room for.
func (s *Store) scan(ctx context.Context, thread string, listed bool, size int, query string, args ...any) ([]store.Checkpoint, error) {
	rows, err := s.r.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]store.Checkpoint, 0, size)
	// One set of destinations for every row, copied out: made a row, they
	// were two allocations each of a whole-chain log's 40,000 rows.
	var cp store.Checkpoint
	var parent, rerootedFrom sql.NullInt64
	var created int64
	var refs []byte
	dst := []any{&cp.ID, &parent, &rerootedFrom, &cp.Base, &created, owned{&cp.Meta}, owned{&refs}, owned{&cp.State}, owned{&cp.Rebased}, owned{&cp.Head}}
	if listed {
		dst = dst[:8]
	}
	for rows.Next() {
		cp, refs = store.Checkpoint{ThreadID: thread}, nil
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		if refs != nil {
			if err := readHashes(refs, &cp.BlobRefs); err != nil {
				return nil, fmt.Errorf("checkpoint %d: its blob references: %w", cp.ID, err)
			}
		}
		cp.ParentID, cp.RerootedFrom, cp.CreatedAt = parent.Int64, rerootedFrom.Int64, micros(created)
		out = append(out, cp)
	}
	return out, rows.Err()
}

// owned scans a document the statement reads as a BLOB (CAST … AS BLOB)
// into *p, keeping the bytes the driver made for it rather than a copy of
// them: modernc's driver makes every column value it returns anew
// (conn.columnBlob), so they are the caller's, though database/sql does
// not promise it of every driver (TestScannedDocumentsAreEachRowsOwn
// fails if a driver reuses them). NULL is nil; an empty document, which
// the driver gives as a nil slice too, stays empty and not nil (the
// chain's head mark is an empty string). Text (a statement that reads
// one as TEXT) is copied.
type owned struct{ p *[]byte }

func (o owned) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*o.p = nil
	case []byte:
		if v == nil {
			v = []byte{}
		}
		*o.p = v
	case string:
		*o.p = []byte(v)
	default:
		return fmt.Errorf("a document column holds %T, not text", src)
	}
	return nil
}

func (s *Store) one(ctx context.Context, thread, query string, args ...any) (store.Checkpoint, error) {
	ctx, err := briefly(ctx)
	if err != nil {
		return store.Checkpoint{}, err
	}
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
	size := 64
	if limit <= 0 {
		limit = -1 // no limit, to SQLite
	} else {
		size = min(limit, 1024)
	}
	return s.scan(ctx, thread, true, size, sqlHistory, thread, before, limit)
}

// Chain implements store.Store in one index range where the branch
// allows (sqlChainRange), else in one recursive query (sqlChain).
func (s *Store) Chain(ctx context.Context, thread string, id int64) (_ []store.Checkpoint, err error) {
	defer s.wrap(ctx, &err, "chain of checkpoint %d of thread %v", id, check.Name(thread))
	return s.readChain(ctx, thread, id, chainQueries{sqlChainRange, sqlChain, []any{thread, id}})
}

// ChainOwned is Chain of a thread tenant owns only (no owner: the
// default tenant's), the owner read in the chain's statements: another
// tenant's thread is store.ErrNotFound. store.Tenanted reads a chain so,
// with no query of the owner before it.
func (s *Store) ChainOwned(ctx context.Context, thread, tenant string, id int64) (_ []store.Checkpoint, err error) {
	defer s.wrap(ctx, &err, "chain of checkpoint %d of thread %v", id, check.Name(thread))
	return s.readChain(ctx, thread, id, chainQueries{sqlChainRangeOwned, sqlChainOwned, []any{thread, id, tenant}})
}

// chainQueries are the statements a chain is read with (see chain) and
// their parameters.
type chainQueries struct {
	rng, walk string
	args      []any
}

func (s *Store) readChain(ctx context.Context, thread string, id int64, q chainQueries) ([]store.Checkpoint, error) {
	ctx, err := briefly(ctx)
	if err != nil {
		return nil, err
	}
	for range 3 {
		chain, err := s.chain(ctx, thread, id, q)
		if err != nil {
			return nil, err
		}
		last := &chain[len(chain)-1]
		if last.Head == nil || len(last.Head) > 0 { // no head, or read already (a doc is never empty)
			return chain, nil
		}
		// It stops at the head snapshot: read it.
		err = s.r.queryRow(ctx, sqlHeadDoc, []any{thread, last.ID}, &last.Head)
		if err == nil {
			return chain, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		// A newer put replaced it meanwhile: its chain goes on now.
	}
	return nil, errors.New("the thread's head snapshot keeps moving; try again")
}

func (s *Store) chain(ctx context.Context, thread string, id int64, q chainQueries) ([]store.Checkpoint, error) {
	span, err := s.checkpoints(ctx, thread, q.rng, q.args...)
	if err != nil {
		return nil, err
	}
	if chain, ok := store.WalkChain(span, id); ok {
		return chain, nil
	}
	cps, err := s.checkpoints(ctx, thread, q.walk, q.args...)
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
	if ctx, err = briefly(ctx); err != nil {
		return nil, err
	}
	return s.messages(ctx, thread, sqlMessages, thread, list)
}

func (s *Store) MessagesAt(ctx context.Context, thread string, index int64) (_ []store.Message, err error) {
	defer s.wrap(ctx, &err, "messages #%d of thread %v", index, check.Name(thread))
	return s.messages(ctx, thread, sqlMessagesAt, thread, index)
}

func (s *Store) MessagesIn(ctx context.Context, thread string, from, to int64) (_ []store.Message, err error) {
	defer s.wrap(ctx, &err, "messages #%d to #%d of thread %v", from, to, check.Name(thread))
	return s.messages(ctx, thread, sqlMessagesIn, thread, from, to)
}

func (s *Store) messages(ctx context.Context, thread, query string, args ...any) ([]store.Message, error) {
	rows, err := s.r.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return scanMessages(rows, thread)
}

// scanMessages reads rows of (hash, index, body, checkpoint, created) as
// thread's messages, and closes them.
func scanMessages(rows *sql.Rows, thread string) ([]store.Message, error) {
	defer rows.Close()
	var out []store.Message
	for rows.Next() {
		m := store.Message{ThreadID: thread}
		var created int64
		if err := rows.Scan(&m.Hash, &m.Index, owned{&m.Body}, &m.CheckpointID, &created); err != nil {
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
	if ctx, err = briefly(ctx); err != nil {
		return nil, err
	}
	rows, err := s.r.query(ctx, sqlBlobs, thread, list)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Blob
	for rows.Next() {
		var b store.Blob
		if err := rows.Scan(&b.Hash, owned{&b.Body}); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// Bodies implements store.Store: the messages as the stretch between
// the first's and the last's index where it is about as long as the list
// (sqlBodiesNear, which Open prepares; without an end that repeats an
// earlier message when that makes it too long); each it did not hold as the
// stretch of its own index when it missed a few, by key (sqlBodies,
// parsed then) when more.
func (s *Store) Bodies(ctx context.Context, thread string, messages, blobs []string) (_ []store.Message, _ []store.Blob, err error) {
	defer s.wrap(ctx, &err, "messages and blobs of thread %v", check.Name(thread))
	ms, err := hashList(distinct(messages))
	if err != nil {
		return nil, nil, err
	}
	bs, err := hashList(distinct(blobs))
	if err != nil {
		return nil, nil, err
	}
	if ctx, err = briefly(ctx); err != nil {
		return nil, nil, err
	}
	want := make(map[string]bool, len(messages))
	first, last := "", "" // no message: no key, no stretch
	if len(messages) > 0 {
		first, last = messages[0], messages[len(messages)-1]
	}
	for _, h := range messages {
		want[h] = true
	}
	limit := 2*len(want) + 16
	outM, outB, err := s.bodies(ctx, thread, want, sqlBodiesNear, ms, bs, first, last, limit)
	if err != nil {
		return nil, nil, err
	}
	// An end that repeats an earlier message keeps that one's index: the
	// stretch is then too long to read. Without it, the rest is one
	// stretch again, and it is one miss.
	for i := 0; len(outM) == 0 && i < 2 && len(messages) > 2; i++ {
		ends := [2]string{messages[1], last}
		if i == 1 {
			ends = [2]string{first, messages[len(messages)-2]}
		}
		if outM, _, err = s.bodies(ctx, thread, want, sqlBodiesNear, ms, "[]", ends[0], ends[1], limit); err != nil {
			return nil, nil, err
		}
	}
	for _, m := range outM {
		delete(want, m.Hash)
	}
	if len(want) == 0 {
		return outM, outB, nil
	}
	missed := slices.Sorted(maps.Keys(want))
	if ms, err = hashList(missed); err != nil {
		return nil, nil, err
	}
	if len(missed) > nearMisses {
		more, _, err := s.bodies(ctx, thread, nil, sqlBodies, ms, "[]")
		return append(outM, more...), outB, err
	}
	// A message repeating an earlier one keeps the earlier's index, out
	// of the stretch; an index may hold two missed (a fork's). One this
	// does not give, the thread does not hold.
	for _, h := range missed {
		if !want[h] {
			continue
		}
		more, _, err := s.bodies(ctx, thread, want, sqlBodiesNear, ms, "[]", h, h, 1)
		if err != nil {
			return nil, nil, err
		}
		for _, m := range more {
			delete(want, m.Hash)
		}
		outM = append(outM, more...)
	}
	return outM, outB, nil
}

// nearMisses is how many messages the stretch missed Bodies reads each
// through sqlBodiesNear again, as the stretch of its own index, rather
// than by key through sqlBodies: in a new process a run of the prepared
// statement cost its first load 0.03-0.04 ms a message, sqlBodies' parse
// and run 0.14 ms (a quarter of the ticket conversation's checkpoints
// miss one).
const nearMisses = 3

// bodies runs a Bodies statement (?1 thread, then args): its messages,
// only those in want when it is not nil (sqlBodiesNear's stretch holds
// others), and its blobs.
func (s *Store) bodies(ctx context.Context, thread string, want map[string]bool, q string, args ...any) ([]store.Message, []store.Blob, error) {
	rows, err := s.r.query(ctx, q, append([]any{thread}, args...)...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var outM []store.Message
	var outB []store.Blob
	for rows.Next() {
		var hash string
		var idx, checkpoint, created sql.NullInt64
		var body []byte
		if err := rows.Scan(&hash, &idx, owned{&body}, &checkpoint, &created); err != nil {
			return nil, nil, err
		}
		switch {
		case !idx.Valid:
			outB = append(outB, store.Blob{Hash: hash, Body: body})
		case want == nil || want[hash]:
			outM = append(outM, store.Message{ThreadID: thread, Hash: hash, Index: idx.Int64, Body: body, CheckpointID: checkpoint.Int64, CreatedAt: micros(created.Int64)})
		}
	}
	return outM, outB, rows.Err()
}

// distinct is hashes each once (sqlBodies joins each it is given).
func distinct(hashes []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(hashes)))
}

// Size implements store.Store: the thread's row of graph_sizes.
func (s *Store) Size(ctx context.Context, thread string) (n int64, err error) {
	defer s.wrap(ctx, &err, "size of thread %v", check.Name(thread))
	brief, err := briefly(ctx)
	if err != nil {
		return 0, err
	}
	err = s.r.queryRow(brief, sqlSize, []any{thread}, &n)
	return n, err
}

// CountSize implements store.SizeCounter in one query (one snapshot); see
// sqlCountSize.
func (s *Store) CountSize(ctx context.Context, thread string) (n int64, err error) {
	defer s.wrap(ctx, &err, "count the size of thread %v", check.Name(thread))
	err = s.r.queryRow(ctx, sqlCountSize, []any{thread}, &n)
	return n, err
}

func (s *Store) Writes(ctx context.Context, thread string, checkpointID int64) (_ []store.TaskWrites, err error) {
	defer s.wrap(ctx, &err, "writes of checkpoint %d of thread %v", checkpointID, check.Name(thread))
	var rows *sql.Rows
	if checkpointID == 0 {
		rows, err = s.r.query(ctx, sqlThreadWrites, thread)
	} else {
		rows, err = s.r.query(ctx, sqlWrites, thread, checkpointID)
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
		st, err := s.r.stmt(ctx, sqlThreadEvents)
		if err != nil {
			return nil, err
		}
		return queryEvents(ctx, st, thread, thread)
	}
	st, err := s.r.stmt(ctx, sqlEvents)
	if err != nil {
		return nil, err
	}
	return queryEvents(ctx, st, thread, thread, checkpointID)
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
	rows, err := s.r.query(ctx, sqlThreads)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Thread
	for rows.Next() {
		th, err := scanThread(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, th)
	}
	return out, rows.Err()
}

// RecentThreads implements store.Store: one statement reads the page's
// rows and counts the rest, in one snapshot.
func (s *Store) RecentThreads(ctx context.Context, before store.ThreadCursor, limit int) (_ []store.Thread, rest int, err error) {
	defer s.wrap(ctx, &err, "threads updated before thread %v", check.Name(before.ID))
	// Past every thread: no before lists from the newest.
	at, id := int64(math.MaxInt64), ""
	switch {
	case before.Placed():
		at, id = before.Micros()
	case before.ID != "":
		if err := s.r.QueryRowContext(ctx, sqlThreadUpdated, before.ID).Scan(&at); errors.Is(err, sql.ErrNoRows) {
			return nil, 0, store.ErrNotFound
		} else if err != nil {
			return nil, 0, err
		}
		id = before.ID
	}
	if limit <= 0 {
		limit = -1 // SQLite's no limit
	}
	rows, err := s.r.query(ctx, sqlRecentThreads, at, id, limit)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []store.Thread
	matched := 0
	for rows.Next() {
		th, err := scanThread(rows, &matched)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, th)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	return out, max(matched-len(out), 0), nil
}

// scanThread reads a row of sqlThreads's columns, then extra's.
func scanThread(rows *sql.Rows, extra ...any) (store.Thread, error) {
	var th store.Thread
	var updated int64
	var parent, rerootedFrom sql.NullInt64
	var base sql.NullBool
	var refs []byte
	cp := &th.Latest
	if err := rows.Scan(append([]any{&th.ID, &th.Checkpoints, &th.LatestID, &updated, &parent, &rerootedFrom, &base, &cp.Meta, &refs, &cp.State}, extra...)...); err != nil {
		return th, err
	}
	th.UpdatedAt = micros(updated)
	// base is NULL only where the migration found no newest row:
	// then there is no listing (Engine.LiveStatusOf reads one).
	if base.Valid {
		if refs != nil {
			if err := readHashes(refs, &cp.BlobRefs); err != nil {
				return th, fmt.Errorf("checkpoint %d of thread %v: its blob references: %w", th.LatestID, check.Name(th.ID), err)
			}
		}
		cp.ThreadID, cp.ID, cp.ParentID, cp.RerootedFrom, cp.Base, cp.CreatedAt = th.ID, th.LatestID, parent.Int64, rerootedFrom.Int64, base.Bool, th.UpdatedAt
	}
	return th, nil
}
