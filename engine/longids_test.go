package engine_test

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
)

// Issue 11's twelfth case: a 64 KB thread id gave a 10 KB error line on
// PostgreSQL, the engine repeating the id whole around the store's clipped
// one. Every message names a long id cut short, on every store, whether
// the store takes the id (repeated characters compress below PostgreSQL's
// index limit) or refuses it (random ones do not).
func TestLongThreadIDsClippedInErrors(t *testing.T) {
	t.Parallel()
	raw := make([]byte, 32<<10)
	_, _ = rand.Read(raw)
	random := hex.EncodeToString(raw)
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			for name, long := range map[string]string{"repeated": strings.Repeat("x", 64<<10), "random": random} {
				t.Run(name, func(t *testing.T) {
					ctx := t.Context()
					st, _ := sc.open(t)
					e, err := ticket.NewEngine(st, ticket.NewMock())
					if err != nil {
						t.Fatal(err)
					}
					errs := map[string]error{}
					call := func(what string, err error) {
						if err != nil {
							errs[what] = err
						}
					}
					call("resume unknown", func() error { _, err := e.Resume(ctx, long, engine.RunConfig{}); return err }())
					call("fork unknown", func() error { _, err := e.Fork(ctx, long, 1, ticket.Input("x"), engine.RunConfig{}); return err }())
					call("get unknown", func() error { _, err := e.Get(ctx, long, 1); return err }())
					call("delete unknown", e.DeleteThread(ctx, long, false))
					call("prune unknown", func() error { _, err := e.Prune(ctx, long, engine.PrunePolicy{KeepLast: 1}); return err }())
					_, err = e.Run(ctx, long, ticket.Input(sentences[0]), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}})
					if err != nil {
						call("run", err) // PostgreSQL: too long for its index
						t.Logf("run refused: %.300s", err)
					} else {
						call("run on pending tasks", func() error { _, err := e.Run(ctx, long, ticket.Input("x"), engine.RunConfig{}); return err }())
						call("get missing checkpoint", func() error { _, err := e.Get(ctx, long, 99); return err }())
						release, err := st.Lock(ctx, long)
						if err != nil {
							t.Fatal(err)
						}
						call("resume locked", func() error { _, err := e.Resume(ctx, long, engine.RunConfig{}); return err }())
						call("delete locked", e.DeleteThread(ctx, long, false))
						call("prune locked", func() error { _, err := e.Prune(ctx, long, engine.PrunePolicy{KeepLast: 1}); return err }())
						release()
					}
					if len(errs) < 6 {
						t.Fatalf("only %d calls failed: the test provokes too little", len(errs))
					}
					for what, err := range errs {
						if msg := err.Error(); len(msg) > 1000 || strings.Contains(msg, long[:65]) {
							t.Errorf("%s: a %d-byte error for a 64 KB thread id; ids must be clipped: %.200s…", what, len(msg), msg)
						}
					}
				})
			}
		})
	}
}
