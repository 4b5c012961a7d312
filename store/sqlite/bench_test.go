package sqlite_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"rewind/store"
)

// BenchmarkHistoryMeta lists 10,000 checkpoints that have meta, as the
// engine now writes them: deltas of 2 KB and, every 50th, a 200 KB base.
// The listing must not pay for the states (storetest's History10k lists
// rows without meta, which carry their state).
func BenchmarkHistoryMeta(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "rewind.db"))
	small, large := fmt.Appendf(nil, `{"d":%q}`, strings.Repeat("x", 2000)), fmt.Appendf(nil, `{"whole":%q}`, strings.Repeat("y", 200_000))
	for id := int64(1); id <= 10_000; id++ {
		cp := store.Checkpoint{ThreadID: "bench", ID: id, ParentID: id - 1, State: small,
			Meta: fmt.Appendf(nil, `{"step":%d,"source":"loop","next":["executor"],"sizes":{"state":2000}}`, id)}
		if id%50 == 1 {
			cp.State, cp.Base = large, true
		}
		if err := s.PutCheckpoint(b.Context(), cp, nil); err != nil {
			b.Fatal(err)
		}
	}
	for _, limit := range []int{0, 20} {
		b.Run(fmt.Sprint("limit", limit), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h, err := s.History(b.Context(), "bench", 0, limit)
				if err != nil || len(h) == 0 || h[0].State != nil {
					b.Fatalf("History: %d checkpoints, %v", len(h), err)
				}
			}
		})
	}
	b.Run("Chain50", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if c, err := s.Chain(b.Context(), "bench", 10_000); err != nil || len(c) != 50 {
				b.Fatalf("Chain: %d checkpoints, %v", len(c), err)
			}
		}
	})
	b.Run("Size", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Size(b.Context(), "bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLockRelease takes and releases one thread's writer lock, as
// every run does once (the file stays open between runs: lock.go).
func BenchmarkLockRelease(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "lock.db"))
	for b.Loop() {
		release, err := s.Lock(b.Context(), "t")
		if err != nil {
			b.Fatal(err)
		}
		if err := release(); err != nil {
			b.Fatal(err)
		}
	}
}
