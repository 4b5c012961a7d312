package postgres

import (
	"bytes"
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"rewind/store"
	"rewind/store/internal/check"
)

// resealDoc is one kind of document Reseal rewrites: get selects the
// thread's (key1, key2, hash, doc) rows, set stores doc ($1) for
// (thread, key1, key2); one-key tables select an empty string as key2 and their set
// only compares it with itself.
type resealDoc struct {
	kind     store.DocKind
	get, set string
}

var resealDocs = []resealDoc{
	{store.DocState, `select checkpoint_id::text, '', '', state::text from graph_checkpoints where thread_id = $1`,
		`update graph_checkpoints set state = $1::json where thread_id = $2 and checkpoint_id = $3::bigint and $4::text = $4::text`},
	{store.DocRebased, `select checkpoint_id::text, '', '', rebased::text from graph_checkpoints where thread_id = $1 and rebased is not null`,
		`update graph_checkpoints set rebased = $1::json where thread_id = $2 and checkpoint_id = $3::bigint and $4::text = $4::text`},
	{store.DocHead, `select checkpoint_id::text, '', '', doc::text from graph_heads where thread_id = $1`,
		`update graph_heads set doc = $1::json where thread_id = $2 and checkpoint_id = $3::bigint and $4::text = $4::text`},
	{store.DocMessage, `select hash, '', hash, body from graph_messages where thread_id = $1`,
		`update graph_messages set body = $1 where thread_id = $2 and hash = $3 and $4::text = $4::text`},
	{store.DocBlob, `select hash, '', hash, body from graph_blobs where thread_id = $1`,
		`update graph_blobs set body = $1 where thread_id = $2 and hash = $3 and $4::text = $4::text`},
	{store.DocWrites, `select checkpoint_id::text, task_id, '', writes::text from graph_writes where thread_id = $1`,
		`update graph_writes set writes = $1::json where thread_id = $2 and checkpoint_id = $3::bigint and task_id = $4`},
	{store.DocDraft, `select operation_id, '', '', body::text from graph_drafts where thread_id = $1`,
		`update graph_drafts set body = $1::json where thread_id = $2 and operation_id = $3 and $4::text = $4::text`},
}

// Reseal implements store.Resealer in one transaction, holding the
// thread's row as Prune and DeleteThread do. A body keeps its search
// words (the rule), so the words column stays true. The old bytes stay
// in the tables' pages until VACUUM reuses them, as any UPDATE's do.
func (s *Store) Reseal(ctx context.Context, thread string, fn func(kind store.DocKind, hash string, doc []byte) ([]byte, error)) (n int, err error) {
	defer s.fail(&err, "reseal thread %v", check.Name(thread))
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, s.db(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // a no-op after Commit
	tag, err := tx.Exec(ctx, lockThreadSQL, thread)
	if err != nil {
		return 0, s.db(err)
	}
	if tag.RowsAffected() == 0 {
		return 0, store.ErrNotFound
	}
	if _, err := tx.Exec(ctx, lockSizeSQL, thread); err != nil {
		return 0, s.db(err)
	}
	for _, d := range resealDocs {
		changed, err := resealKind(ctx, tx, d, thread, fn)
		if err != nil {
			return 0, s.db(err)
		}
		n += changed
	}
	if _, err := tx.Exec(ctx, recountSizeSQL, thread); err != nil {
		return 0, s.db(err)
	}
	return n, s.db(tx.Commit(ctx))
}

func resealKind(ctx context.Context, tx pgx.Tx, d resealDoc, thread string, fn func(store.DocKind, string, []byte) ([]byte, error)) (int, error) {
	rows, err := tx.Query(ctx, d.get, thread)
	if err != nil {
		return 0, err
	}
	type row struct {
		k1, k2 string
		doc    []byte
	}
	var redo []row
	var k1, k2, hash, doc string
	_, err = pgx.ForEachRow(rows, []any{&k1, &k2, &hash, &doc}, func() error {
		out, err := fn(d.kind, hash, []byte(doc))
		if err != nil || bytes.Equal(out, []byte(doc)) {
			return err
		}
		if err := check.Resealed(d.kind, hash, []byte(doc), out); err != nil {
			return err
		}
		redo = append(redo, row{k1, k2, out})
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, r := range redo {
		if _, err := tx.Exec(ctx, d.set, string(r.doc), thread, r.k1, r.k2); err != nil {
			return 0, fmt.Errorf("store a resealed %s: %w", d.kind, err)
		}
	}
	return len(redo), nil
}
