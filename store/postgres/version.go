package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// SchemaVersion is the store schema this rewind writes: Open migrates an
// older store to it (cli/app opens an older one only for a command that
// writes).
func SchemaVersion() int { return len(migrations()) }

// Reach connects to the database at url and disconnects, creating and
// migrating nothing; its error is Open's for a failed connect (the fix
// for a refused password, a missing database, nothing listening, …).
func Reach(ctx context.Context, url string) error {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("postgres store: bad URL (want postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable]): %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout <= 0 {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	pool, err := connect(ctx, cfg, newTarget(cfg))
	if err != nil {
		return err
	}
	pool.Close()
	return nil
}
