package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"rewind/store"
	"rewind/store/internal/check"
)

// Deleting: DeleteThread (and the WAL it empties) and Prune.

func (s *Store) DeleteThread(ctx context.Context, thread string) (err error) {
	defer s.wrap(ctx, &err, "delete thread %v", check.Name(thread))
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.end()
	var deleted int64
	for _, q := range []string{sqlDeleteEvents, sqlDeleteWrites, sqlDeleteThread, sqlDeleteMsgs, sqlDeleteMsgKeys, sqlDeleteMsgWords, sqlDeleteBlobs, sqlDeleteDrafts, sqlDeleteEpoch, sqlDeleteHead, sqlDeleteThreadRow, sqlDeleteThreadTenant} {
		res, err := tx.in(q).ExecContext(ctx, thread)
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
	// Its rows' triggers left it at 0; nothing of the thread is kept.
	if _, err := tx.in(sqlDeleteSize).ExecContext(ctx, thread); err != nil {
		return err
	}
	if err := tx.commit(); err != nil {
		return err
	}
	s.wipeWAL(ctx) // before tx.end lets the next writer in
	if s.unwiped.Load() {
		// A reader holds the WAL: whichever rewind process next opens
		// or closes the store finishes the wipe (Unerased says so).
		s.markWipe()
	}
	return nil
}

// wipeWAL folds the WAL into the file and empties it, so that the rows a
// delete zeroed in the file do not live on in the WAL's older frames. It
// waits for readers only briefly: while another connection is in the
// middle of a read the WAL cannot start over, and then unwiped has the
// next write transaction (or Close) try again. It runs on the writer's
// connection, s.w.mu held, between transactions. Once the WAL is empty it
// removes the pending-wipe markers it found before it began (erase.go):
// the wipe covers every delete committed before them.
func (s *Store) wipeWAL(ctx context.Context) {
	s.unwiped.Store(true)
	markers := s.wipeMarkers()
	if s.w.take(ctx) != nil {
		return
	}
	conn := s.w.conn
	if _, err := conn.ExecContext(ctx, `PRAGMA busy_timeout = 100`); err != nil {
		return
	}
	var busy, log, done int
	err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &log, &done)
	_, _ = conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA busy_timeout = 0`) // the writer's (see writer.begin)
	if err == nil && busy == 0 {
		s.unwiped.Store(false)
		s.unmarkWipes(markers)
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
	defer tx.end()
	var newest sql.NullInt64
	if err := tx.in(sqlNewest).QueryRowContext(ctx, thread).Scan(&newest); err != nil {
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
	// The head snapshot may hold a blob this frees: it goes, and the
	// thread's next run writes one again.
	if _, err := tx.in(sqlDeleteHead).ExecContext(ctx, thread); err != nil {
		return store.PruneResult{}, err
	}
	counts := [4]int64{}
	for i, q := range []string{sqlPruneWrites, sqlPruneEvents, sqlPruneCheckpoints, sqlPruneBlobs} {
		args := []any{thread, list}
		if q == sqlPruneBlobs {
			args = args[:1] // every blob of the thread that no remaining row refers to
		}
		r, err := tx.in(q).ExecContext(ctx, args...)
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
	if _, err := tx.in(sqlPruneThread).ExecContext(ctx, thread, counts[2]); err != nil {
		return store.PruneResult{}, err
	}
	if err := tx.commit(); err != nil {
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
func (s *Store) pruneRerooted(ctx context.Context, tx *wtx, thread string, list []byte) ([]rerooted, map[int64][]string, error) {
	rows, err := tx.in(sqlPruneRerooted).QueryContext(ctx, thread, list)
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
func (s *Store) pruneRebase(ctx context.Context, tx *wtx, thread string, list []byte, n int, rebase []store.Rebase, refs map[int64][]string) error {
	r, err := tx.in(sqlPruneReroot).ExecContext(ctx, thread, list)
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
		if _, err := tx.in(sqlRebase).ExecContext(ctx, thread, rb.ID, string(rb.State), blobs); err != nil {
			return err
		}
	}
	return nil
}

// pruneFound lists which of the ids (a JSON array) are checkpoints of the
// thread, ascending.
func (s *Store) pruneFound(ctx context.Context, tx *wtx, thread string, list []byte, n int) ([]int64, error) {
	rows, err := tx.in(sqlPruneFound).QueryContext(ctx, thread, list)
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
