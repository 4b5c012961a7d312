package backend

import (
	"context"
	"strings"

	"rewind/store"
	"rewind/store/postgres"
	"rewind/store/sqlite"
)

// SchemaVersion is the store schema this rewind writes on a backend
// ("sqlite", "postgres"); 0 for memory, which keeps nothing.
func SchemaVersion(backend string) int {
	switch backend {
	case "sqlite":
		return sqlite.SchemaVersion
	case "postgres":
		return postgres.SchemaVersion()
	}
	return 0
}

// Reach says why the spec's PostgreSQL server cannot be reached, in
// Open's words, creating and migrating nothing; nil when it can, and for
// any other spec.
func Reach(ctx context.Context, spec string) error {
	if _, ok, _ := store.SQLiteFile(spec); ok {
		return nil
	}
	if strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://") {
		return postgres.Reach(ctx, spec)
	}
	return nil
}
