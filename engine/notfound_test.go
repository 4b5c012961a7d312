package engine_test

import (
	"context"
	"errors"
	"testing"

	"rewind/engine"
	"rewind/store"
	"rewind/store/backend/backendtest"
	"rewind/store/browse"
)

// An unknown thread or checkpoint is one line that ends with how to see
// what is there, on every store: the store's words (its name, the query)
// are not left trailing after the fix. errors.Is still finds the cause.
func TestNotFoundEndsWithTheFix(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		name, st := b.Name, b.Open(t, "nf")
		e := newTestEngine(t, st, gateGraph(nil))
		if _, err := e.Run(ctx, "t", input("user"), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
		const thread = "thread \"nosuch\" not found"
		const checkpoint = "checkpoint 999 not found on thread \"t\""
		for what, c := range map[string]struct {
			want string
			call func() error
		}{
			"Get thread":     {thread, func() error { _, err := e.Get(ctx, "nosuch", 1); return err }},
			"Get checkpoint": {checkpoint, func() error { _, err := e.Get(ctx, "t", 999); return err }},
			"Latest":         {thread, func() error { _, err := e.Latest(ctx, "nosuch"); return err }},
			"Ancestors":      {checkpoint, func() error { _, err := e.Ancestors(ctx, "t", 999); return err }},
			"Status":         {thread, func() error { _, err := e.Status(ctx, "nosuch"); return err }},
			"browse Checkpoint": {checkpoint, func() error {
				_, err := e.Browse(browse.About{}).Checkpoint(ctx, browse.Chain{Thread: "t"}, "999")
				return err
			}},
		} {
			err := c.call()
			if err == nil || err.Error() != c.want {
				t.Errorf("%s: %s: got %v, want %q", name, what, err, c.want)
			}
			if want := map[bool]engine.Action{true: engine.FixThreads, false: engine.FixLog}[c.want == thread]; !fixedBy(err, want, map[bool]string{true: "", false: "t"}[c.want == thread]) {
				t.Errorf("%s: %s: %v does not offer how to see what is there", name, what, err)
			}
			if !errors.Is(err, store.ErrNotFound) || !errors.Is(err, browse.ErrNotFound) {
				t.Errorf("%s: %s: %v does not match store.ErrNotFound and browse.ErrNotFound", name, what, err)
			}
		}
	})
}
