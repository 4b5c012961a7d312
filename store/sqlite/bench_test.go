package sqlite_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

// BenchmarkTurn is the store's part of a ticket turn (an op), shaped as
// the engine writes one (recorded from the LongThread bench): 8 puts, the
// first a base re-sending the last turn's 18 messages, 16 new messages,
// 3 events, a blob sent twice, a 5 KB head snapshot on the last, each put
// settling its parent, and 3 task writes. Threads run 125 turns.
// cpu-ns/op includes the WAL checkpointer's goroutine.
func BenchmarkTurn(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "turn.db"))
	ctx := b.Context()
	doc := func(n int, tag string, i int) []byte {
		return fmt.Appendf(nil, `{"role":"assistant","content":%q,"n":%d}`, strings.Repeat(tag, n/len(tag)), i)
	}
	// The documents, made before the clock starts.
	var msgs [125][16]store.Message
	var bases, heads [125][]byte
	for n := range 125 {
		for i := range 16 {
			body := doc(200, "message ", n*100+i)
			msgs[n][i] = store.Message{Hash: store.ContentHash(body), Index: int64(n*16 + i), Body: body}
		}
		bases[n], heads[n] = doc(2000, "base ", n), doc(5000, "head ", n)
	}
	msg := func(turn, i int) store.Message { return msgs[turn][i] }
	var states [8][]byte
	for i := range states {
		states[i] = doc(300, "state ", i)
	}
	var writes [3][]byte
	for k := range writes {
		writes[k] = doc(1400, "write ", k)
	}
	tasks := []string{"task-0", "task-1", "task-2"}
	blob := []byte(`{"attachment":"` + strings.Repeat("b", 300) + `"}`)
	// news[i] is how many new messages put i stores.
	news := []int{1, 0, 9, 1, 3, 1, 0, 1}
	var epoch int64
	var thread string
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ReportAllocs()
	start, turn := cpu(), 0
	for b.Loop() {
		n := turn % 125
		if n == 0 {
			thread = fmt.Sprint("bench-", turn)
			var err error
			if epoch, err = s.Fence(ctx, thread); err != nil {
				b.Fatal(err)
			}
		}
		id, next := int64(n*8), 0
		for i, fresh := range news {
			id++
			cp := store.Checkpoint{ThreadID: thread, ID: id, ParentID: id - 1, Epoch: epoch, State: states[i],
				Meta: []byte(`{"step":3,"source":"loop","status":"running"}`), Settles: id - 1}
			var events []store.Event
			switch i {
			case 0:
				cp.Base, cp.Settles, cp.State = true, 0, bases[n]
				for k := range 18 * min(n, 1) { // the last turn's, again
					cp.Messages = append(cp.Messages, msg(n-1, k%16))
				}
				cp.Blobs, cp.BlobRefs = []store.Blob{{Hash: store.ContentHash(blob), Body: blob}}, []string{store.ContentHash(blob)}
				events = []store.Event{{Type: "input", Payload: []byte(`{"text":"hello"}`)}}
			case 6:
				for k := next - 6; k < next; k++ {
					cp.Messages = append(cp.Messages, msg(n, k))
				}
				cp.Blobs, cp.BlobRefs = []store.Blob{{Hash: store.ContentHash(blob), Body: blob}}, []string{store.ContentHash(blob)}
				events = []store.Event{{Type: "tool", Payload: []byte(`{"ok":true}`)}, {Type: "draft", Payload: []byte(`{"id":"op"}`)}}
			case 7:
				cp.Head = heads[n]
			}
			if id == 1 {
				cp.ParentID, cp.Settles = 0, 0
			}
			for range fresh {
				cp.Messages = append(cp.Messages, msg(n, next))
				next++
			}
			if err := s.PutCheckpoint(ctx, cp, events); err != nil {
				b.Fatal(err)
			}
			if i == 1 {
				for k := range 3 {
					w := store.TaskWrites{ThreadID: thread, CheckpointID: id, TaskID: tasks[k], Epoch: epoch, Writes: writes[k]}
					if err := s.PutWrites(ctx, w); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		turn++
	}
	b.ReportMetric(float64(cpu()-start)/float64(turn), "cpu-ns/op")
}

// BenchmarkMessageReads reads a long thread's messages (125 turns of 16,
// 0.2-2 KB each) as the engine does: Bodies of 24 hashes spread over the
// thread (a cold rebuild's references), MessagesIn of 64 indexes (a
// transcript's range) and MessagesAt of one.
func BenchmarkMessageReads(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "reads.db"))
	ctx := b.Context()
	var hashes []string
	for turn := range 125 {
		cp := store.Checkpoint{ThreadID: "long", ID: int64(turn + 1), ParentID: int64(turn), Base: true, State: []byte(`{}`)}
		for i := range 16 {
			idx := turn*16 + i
			body := fmt.Appendf(nil, `{"role":"assistant","n":%d,"content":%q}`, idx, strings.Repeat("message ", 25+(idx*37)%225))
			cp.Messages = append(cp.Messages, store.Message{Hash: store.ContentHash(body), Index: int64(idx), Body: body})
			hashes = append(hashes, cp.Messages[i].Hash)
		}
		if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
			b.Fatal(err)
		}
	}
	var some []string
	for i := range 24 {
		some = append(some, hashes[(i*877)%len(hashes)])
	}
	b.Run("Bodies24", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ms, _, err := s.Bodies(ctx, "long", some, nil); err != nil || len(ms) != 24 {
				b.Fatal(len(ms), err)
			}
		}
	})
	b.Run("MessagesIn64", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ms, err := s.MessagesIn(ctx, "long", 1000, 1063); err != nil || len(ms) != 64 {
				b.Fatal(len(ms), err)
			}
		}
	})
	b.Run("MessagesAt", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ms, err := s.MessagesAt(ctx, "long", 1000); err != nil || len(ms) != 1 {
				b.Fatal(len(ms), err)
			}
		}
	})
}
