package langgraph

import (
	"database/sql"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Handles lets a test try to write through a source's own connections.
func Handles(s Source) (*sql.DB, *pgxpool.Pool) {
	switch db := s.(*reader).db.(type) {
	case *sqliteDB:
		h, _ := db.handle()
		return h, nil
	case *pgDB:
		return nil, db.pool
	}
	return nil, nil
}

// MaxItems is how many values a stored value may hold.
const MaxItems = maxItems
