package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"rewind/store"
	"rewind/store/sqlite"
)

// A row given no CreatedAt is stamped with the store's clock (WithClock),
// to the microsecond, and reads back so after reopening; one given a
// CreatedAt keeps it.
func TestWithClockStampsRowsGivenNone(t *testing.T) {
	t.Parallel()
	at := time.Date(2001, 2, 3, 4, 5, 6, 789012345, time.UTC)
	want := at.Truncate(time.Microsecond)
	path := filepath.Join(t.TempDir(), "rewind.db")
	ctx := t.Context()
	s, err := sqlite.Open(context.Background(), path, sqlite.WithClock(func() time.Time { return at }))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutCheckpoint(ctx, cp(1, 0), nil); err != nil {
		t.Fatal(err)
	}
	given := cp(2, 1)
	given.CreatedAt = time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.PutCheckpoint(ctx, given, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.PutWrites(ctx, store.TaskWrites{ThreadID: "t", CheckpointID: 1, TaskID: "x", Writes: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	d, _, err := s.CreateDraft(ctx, store.Draft{ThreadID: "t", OperationID: "op", Body: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !d.CreatedAt.Equal(want) {
		t.Errorf("draft CreatedAt %v, want the clock's %v", d.CreatedAt, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, path)
	for id, w := range map[int64]time.Time{1: want, 2: given.CreatedAt} {
		got, err := s.Get(ctx, "t", id)
		if err != nil {
			t.Fatal(err)
		}
		if !got.CreatedAt.Equal(w) {
			t.Errorf("checkpoint %d CreatedAt %v after reopening, want %v", id, got.CreatedAt, w)
		}
	}
	ws, err := s.Writes(ctx, "t", 1)
	if err != nil || len(ws) != 1 {
		t.Fatalf("Writes = %v, %v", ws, err)
	}
	if !ws[0].CreatedAt.Equal(want) {
		t.Errorf("task writes CreatedAt %v, want the clock's %v", ws[0].CreatedAt, want)
	}
}
