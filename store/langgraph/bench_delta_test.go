package langgraph_test

import (
	"context"
	"testing"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// BenchmarkDeltaThread shows every checkpoint of the 233-checkpoint
// DeltaChannel thread (a snapshot every 100 updates): each rebuilds its
// messages from the snapshot before it, up to ~100 ancestors back.
func BenchmarkDeltaThread(b *testing.B) {
	cases := []struct {
		name string
		spec func(b *testing.B) string
	}{
		{"sqlite-python", func(b *testing.B) string { return "sqlite:" + lgtest.Copy(b, "sqlite-python-delta.db") }},
		{"sqlite-js", func(b *testing.B) string { return "sqlite:" + lgtest.Copy(b, "sqlite-js-cases.db") }},
		{"postgres-js", func(b *testing.B) string { return lgtest.Dump(b, "postgres-js-cases.sql") }},
	}
	for _, cs := range cases {
		b.Run(cs.name, func(b *testing.B) {
			src := open(b, cs.spec(b))
			ctx := context.Background()
			c := langgraph.Chain{Thread: "t-delta"}
			hist, err := src.History(ctx, c, "", 0)
			if err != nil || len(hist) < 200 {
				b.Fatalf("%d listings, %v", len(hist), err)
			}
			b.ResetTimer()
			for b.Loop() {
				for _, l := range hist {
					cp, err := src.Checkpoint(ctx, c, l.ID)
					if err != nil || cp.Stored == nil {
						b.Fatalf("%s: %+v, %v", l.ID, cp.Stored, err)
					}
				}
			}
		})
	}
}
