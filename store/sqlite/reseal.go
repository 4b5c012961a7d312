package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"

	"rewind/store"
	"rewind/store/internal/check"
)

// resealDoc is one kind of document Reseal rewrites: get selects the
// thread's (key1, key2, hash, doc) rows, set stores doc for (thread,
// key1, key2); one-key tables select an empty string as key2 and their set ignores it.
type resealDoc struct {
	kind     store.DocKind
	get, set string
}

var resealDocs = []resealDoc{
	{store.DocState, `SELECT checkpoint_id, '', '', state FROM graph_checkpoints WHERE thread_id = ?1`,
		`UPDATE graph_checkpoints SET state = ?1 WHERE thread_id = ?2 AND checkpoint_id = ?3 AND ?4 = ?4`},
	{store.DocRebased, `SELECT checkpoint_id, '', '', rebased FROM graph_checkpoints WHERE thread_id = ?1 AND rebased IS NOT NULL`,
		`UPDATE graph_checkpoints SET rebased = ?1 WHERE thread_id = ?2 AND checkpoint_id = ?3 AND ?4 = ?4`},
	{store.DocHead, `SELECT checkpoint_id, '', '', doc FROM graph_heads WHERE thread_id = ?1`,
		`UPDATE graph_heads SET doc = ?1 WHERE thread_id = ?2 AND checkpoint_id = ?3 AND ?4 = ?4`},
	{store.DocMessage, `SELECT idx, hash, hash, body FROM graph_message_bodies WHERE thread_id = ?1`,
		`UPDATE graph_message_bodies SET body = ?1 WHERE thread_id = ?2 AND idx = ?3 AND hash = ?4`},
	{store.DocBlob, `SELECT hash, '', hash, body FROM graph_blobs WHERE thread_id = ?1`,
		`UPDATE graph_blobs SET body = ?1 WHERE thread_id = ?2 AND hash = ?3 AND ?4 = ?4`},
	{store.DocWrites, `SELECT checkpoint_id, task_id, '', writes FROM graph_writes WHERE thread_id = ?1`,
		`UPDATE graph_writes SET writes = ?1 WHERE thread_id = ?2 AND checkpoint_id = ?3 AND task_id = ?4`},
	{store.DocDraft, `SELECT operation_id, '', '', body FROM graph_drafts WHERE thread_id = ?1`,
		`UPDATE graph_drafts SET body = ?1 WHERE thread_id = ?2 AND operation_id = ?3 AND ?4 = ?4`},
}

// Reseal implements store.Resealer in one BEGIN IMMEDIATE transaction
// on the writer's connection (a rare command: its statements are not
// prepared ahead). A body keeps its search words (the rule), so the FTS
// index needs no change; the old bytes stay in free pages and the WAL
// until SQLite reuses them, as an UPDATE's do.
func (s *Store) Reseal(ctx context.Context, thread string, fn func(kind store.DocKind, hash string, doc []byte) ([]byte, error)) (n int, err error) {
	defer s.wrap(ctx, &err, "reseal thread %v", check.Name(thread))
	tx, err := s.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.end()
	conn := s.w.conn
	var count int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM graph_checkpoints WHERE thread_id = ?`, thread).Scan(&count); err != nil {
		return 0, err
	}
	if count == 0 {
		return 0, store.ErrNotFound
	}
	for _, d := range resealDocs {
		changed, err := resealKind(ctx, conn, d, thread, fn)
		if err != nil {
			return 0, err
		}
		n += changed
	}
	return n, tx.commit()
}

type resealRow struct {
	k1, k2 any
	doc    []byte
}

func resealKind(ctx context.Context, conn *sql.Conn, d resealDoc, thread string, fn func(store.DocKind, string, []byte) ([]byte, error)) (int, error) {
	redo, err := resealed(ctx, conn, d, thread, fn)
	if err != nil {
		return 0, err
	}
	// After the rows are closed: the connection runs one statement at a
	// time.
	for _, r := range redo {
		if _, err := conn.ExecContext(ctx, d.set, string(r.doc), thread, r.k1, r.k2); err != nil {
			return 0, fmt.Errorf("store a resealed %s: %w", d.kind, err)
		}
	}
	return len(redo), nil
}

// resealed are the rows of d whose document fn changed, checked.
func resealed(ctx context.Context, conn *sql.Conn, d resealDoc, thread string, fn func(store.DocKind, string, []byte) ([]byte, error)) ([]resealRow, error) {
	rows, err := conn.QueryContext(ctx, d.get, thread)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var redo []resealRow
	for rows.Next() {
		var k1, k2 any
		var hash string
		var doc []byte
		if err := rows.Scan(&k1, &k2, &hash, &doc); err != nil {
			return nil, err
		}
		out, err := fn(d.kind, hash, bytes.Clone(doc))
		if err != nil {
			return nil, err
		}
		if bytes.Equal(out, doc) {
			continue
		}
		if err := check.Resealed(d.kind, hash, doc, out); err != nil {
			return nil, err
		}
		redo = append(redo, resealRow{k1, k2, out})
	}
	return redo, rows.Err()
}
