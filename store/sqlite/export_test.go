package sqlite

import "context"

// For the upgrade tests: how the schema this binary writes
// (SchemaVersion) got there.
var Migrations = migrations

// LoseTheTransaction rolls back the write in progress behind the store's
// back, as SQLite itself does after some failures (an I/O error, a full
// disk, an interrupt): for a tx hook, which runs inside the write.
func LoseTheTransaction(s *Store) error {
	_, err := s.w.conn.ExecContext(context.Background(), sqlRollback)
	return err
}

// WriteConn is the connection the writer holds (nil: none).
func WriteConn(s *Store) any {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	return s.w.conn
}
