package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"rewind/store"
	"rewind/store/internal/check"
)

// store.Drafts: the side-effect table.

func (s *Store) CreateDraft(ctx context.Context, d store.Draft) (_ store.Draft, created bool, err error) {
	defer s.wrap(ctx, &err, "create draft %v of thread %v", check.Name(d.OperationID), check.Name(d.ThreadID))
	if err := check.Draft(d); err != nil {
		return store.Draft{}, false, err
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return store.Draft{}, false, err
	}
	defer tx.end()
	ctx = quiet(ctx)
	// The write transaction (BEGIN IMMEDIATE) holds the only write lock:
	// the row read is the one there, or the one inserted now.
	stored := store.Draft{ThreadID: d.ThreadID, OperationID: d.OperationID}
	var createdAt int64
	err = tx.in(sqlDraft).QueryRowContext(ctx, d.ThreadID, d.OperationID).Scan(&stored.Body, &createdAt)
	switch {
	case err == nil:
		stored.CreatedAt = micros(createdAt)
		return stored, false, tx.commit()
	case !errors.Is(err, sql.ErrNoRows):
		return store.Draft{}, false, err
	}
	// Only a new row is fenced: an existing draft is returned above.
	if err := s.fence(ctx, tx, d.ThreadID, d.Epoch); err != nil {
		return store.Draft{}, false, err
	}
	createdAt = s.now()
	if _, err := tx.in(sqlPutDraft).ExecContext(ctx, d.ThreadID, d.OperationID, string(d.Body), createdAt); err != nil {
		return store.Draft{}, false, err
	}
	if err := tx.in(sqlDraft).QueryRowContext(ctx, d.ThreadID, d.OperationID).Scan(&stored.Body, &createdAt); err != nil {
		return store.Draft{}, false, err
	}
	stored.CreatedAt = micros(createdAt)
	if err := tx.commit(); err != nil {
		return store.Draft{}, false, err
	}
	return stored, true, nil
}

func (s *Store) Draft(ctx context.Context, thread, operationID string) (_ store.Draft, err error) {
	defer s.wrap(ctx, &err, "get draft %v of thread %v", check.Name(operationID), check.Name(thread))
	d := store.Draft{ThreadID: thread, OperationID: operationID}
	var created int64
	brief, err := briefly(ctx)
	if err != nil {
		return store.Draft{}, err
	}
	err = s.r.queryRow(brief, sqlDraft, []any{thread, operationID}, &d.Body, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Draft{}, store.ErrNotFound
	}
	if err != nil {
		return store.Draft{}, err
	}
	d.CreatedAt = micros(created)
	return d, nil
}

func (s *Store) ListDrafts(ctx context.Context, thread string) (_ []store.Draft, err error) {
	defer s.wrap(ctx, &err, "list drafts of thread %v", check.Name(thread))
	rows, err := s.r.query(ctx, sqlDrafts, thread)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Draft
	for rows.Next() {
		d := store.Draft{ThreadID: thread}
		var created int64
		if err := rows.Scan(&d.OperationID, &d.Body, &created); err != nil {
			return nil, err
		}
		d.CreatedAt = micros(created)
		out = append(out, d)
	}
	return out, rows.Err()
}
