package memory_test

import (
	"testing"

	"rewind/store"
	"rewind/store/memory"
	"rewind/store/storetest"
)

func TestConformance(t *testing.T) {
	// Every capability but Processes: no other process can reach memory.
	storetest.Run(t, storetest.Backend{
		Open: func(t *testing.T) store.Store { return open(t) },
		Caps: []storetest.Capability{storetest.Drafts, storetest.Fencing, storetest.TxHook, storetest.Watch, storetest.Erasure},
	})
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store { return open(b) })
}

func open(tb testing.TB) store.Store {
	s := memory.New()
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}
