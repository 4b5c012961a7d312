package bench

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"rewind/cli/rewindbin"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/backend"
	"rewind/store/backend/backendtest"
	"rewind/store/postgres/pgtest"
)

// searchTurns is the length of the thread BenchmarkSearch searches: the
// issue's 1,000 turns (about 11,000 messages).
const searchTurns = 1000

// searchThreads are the 1,000-turn threads BenchmarkSearch searches, one
// a store, built once a process (the bench's Run, as `rewind bench`
// builds one) and shared by -count's runs; cleanup removes the sqlite
// file and drops the PostgreSQL database (TestMain).
var searchThreads = struct {
	sync.Mutex
	stores  map[string]store.Store
	cleanup []func() error
}{stores: map[string]store.Store{}}

func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	for _, f := range searchThreads.cleanup {
		if err := f(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	rewindbin.Exit(code)
}

func searchThread(b *testing.B, be backendtest.Backend) store.Store {
	searchThreads.Lock()
	defer searchThreads.Unlock()
	name := be.Name
	if st := searchThreads.stores[name]; st != nil {
		return st
	}
	ctx := context.Background()
	spec, remove := be.Lasting(b, "search")
	searchThreads.cleanup = append(searchThreads.cleanup, remove)
	st, err := backend.Open(ctx, spec)
	if err != nil {
		b.Fatal(err)
	}
	searchThreads.cleanup = append([]func() error{st.Close}, searchThreads.cleanup...)
	if _, err := Run(ctx, st, name, Options{Turns: searchTurns, Thread: "long", Reads: 1}, nil); err != nil {
		b.Fatal(err)
	}
	searchThreads.stores[name] = st
	return st
}

// BenchmarkSearch is `/` in the TUI and `rewind search` on a 1,000-turn
// thread (issue 33: ≤ 50 ms), on every store: the engine's Search, then
// the hits read for display (ticket.Hits). Rare finds one order's turn
// (its messages on the thread's one branch); Common a word of every
// third turn, the TUI's first 500 hits.
//
//	go test -run x -bench Search -count 5 ./engine/bench
//
// (with REWIND_TEST_POSTGRES for the PostgreSQL case).
func BenchmarkSearch(b *testing.B) {
	backendtest.Each(b, func(b *testing.B, be backendtest.Backend) {
		st := searchThread(b, be)
		e, err := ticket.NewEngine(st, ticket.NewMock())
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range []struct {
			name, query string
			limit       int
		}{{"Rare", "SO20260500", 0}, {"Common", "refund", 500}} {
			b.Run(q.name, func(b *testing.B) {
				n := 0
				for b.Loop() {
					found, err := e.Search(context.Background(), "long", q.query, q.limit)
					if err != nil || len(found) == 0 {
						b.Fatal(len(found), err)
					}
					n = len(ticket.Hits(found, q.query))
				}
				b.ReportMetric(float64(n), "hits")
			})
		}
	})
}
