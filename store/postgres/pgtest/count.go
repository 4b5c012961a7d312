package pgtest

import (
	"context"
	"net"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Counting makes a pool's connections count the client's writes, a round
// trip each (pgx sends a round trip's messages in one write), and the
// connections made: for tests of how many round trips something costs.
func Counting(writes, dials *atomic.Int64) func(*pgxpool.Config) {
	return func(cfg *pgxpool.Config) {
		var d net.Dialer
		cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{Conn: c, writes: writes}, nil
		}
	}
}

// countingConn counts the client's writes.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}
