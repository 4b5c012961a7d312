package drill

import (
	"context"
	"time"
)

// RunGrantTTLs is Run with the grant lives the expired-grant drills try.
func RunGrantTTLs(ctx context.Context, cfg Config, ttls ...time.Duration) (Result, error) {
	return run(ctx, cfg, ttls)
}
