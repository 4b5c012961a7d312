package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"rewind/store/internal/check"
)

// Epoch implements store.Store: a read of graph_epochs, no transaction
// of the writer's (a writer that still holds its epoch skips Fence).
func (s *Store) Epoch(ctx context.Context, thread string) (epoch int64, err error) {
	defer s.wrap(ctx, &err, "read the writer epoch of thread %v", check.Name(thread))
	if err := check.Text("thread id", thread); err != nil {
		return 0, err
	}
	err = s.r.QueryRowContext(ctx, sqlEpoch, thread).Scan(&epoch)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return epoch, err
}
