package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"rewind/store"
)

// Bench measures the calls a run makes per superstep and the ones the TUI
// makes while scrubbing. open must return a fresh, empty store and close it
// with b.Cleanup.
func Bench(b *testing.B, open func(b *testing.B) store.Store) {
	benchWatch(b, open)
	for _, c := range []struct {
		name string
		run  func(*testing.B, store.Store)
	}{
		{"PutCheckpoint", benchPutCheckpoint},
		{"PutCheckpointFenced", benchPutCheckpointFenced},
		{"Get", benchGet},
		{"Latest", benchLatest},
		{"Chain", benchChain},
		{"Bodies", benchBodies},
		{"History10k", benchHistory10k},
		{"DeleteThread", benchDeleteThread},
		{"Prune10kKeepLast100", benchPrune10kKeepLast100},
	} {
		b.Run(c.name, func(b *testing.B) { c.run(b, open(b)) })
	}
}

// benchPutCheckpoint writes checkpoints shaped like the engine's.
func benchPutCheckpoint(b *testing.B, s store.Store) {
	b.ReportAllocs()
	var id int64
	for b.Loop() {
		id++
		benchPut(b, s, "bench", id)
	}
}

// benchPutCheckpointFenced is benchPutCheckpoint with a fencing epoch:
// the cost of checking it in the write's transaction.
func benchPutCheckpointFenced(b *testing.B, s store.Store) {
	epoch, err := s.Fence(b.Context(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var id int64
	for b.Loop() {
		id++
		cp := store.Checkpoint{ThreadID: "bench", ID: id, ParentID: id - 1, State: benchState, Base: true, Epoch: epoch}
		if err := s.PutCheckpoint(b.Context(), cp, benchEvents); err != nil {
			b.Fatal(err)
		}
	}
}

// benchGet reads one checkpoint of 100 by id.
func benchGet(b *testing.B, s store.Store) {
	fill(b, s, "bench", 100)
	b.ReportAllocs()
	var i int64
	for b.Loop() {
		i++
		if _, err := s.Get(b.Context(), "bench", i%100+1); err != nil {
			b.Fatal(err)
		}
	}
}

// benchLatest reads a 100-checkpoint thread's newest.
func benchLatest(b *testing.B, s store.Store) {
	fill(b, s, "bench", 100)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Latest(b.Context(), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// benchChain reads chains, how a checkpoint is read: its row and its
// ancestors back to the nearest base (up to 16 rows here).
func benchChain(b *testing.B, s store.Store) {
	fill(b, s, "bench", 160)
	b.ReportAllocs()
	var i int64
	for b.Loop() {
		i++
		id := i%160 + 1
		if c, err := s.Chain(b.Context(), "bench", id); err != nil || len(c) != int((id-1)%16)+1 {
			b.Fatalf("Chain(%d): %d rows, %v", id, len(c), err)
		}
	}
}

// benchBodies reads what a rebuild reads after its chain: 30 messages
// and a blob, by Messages then Blobs (two round trips) or by Bodies (one).
func benchBodies(b *testing.B, s store.Store) {
	cp := checkpoint("bench", 1, 0)
	for i := range 30 {
		cp.Messages = append(cp.Messages, message(int64(i+1), fmt.Sprintf("message %d of a long thread", i)))
	}
	big := blob(strings.Repeat("a summary of the conversation ", 60))
	cp.Blobs, cp.BlobRefs = []store.Blob{big}, []string{big.Hash}
	if err := s.PutCheckpoint(b.Context(), cp, nil); err != nil {
		b.Fatal(err)
	}
	var hashes []string
	for _, m := range cp.Messages {
		hashes = append(hashes, m.Hash)
	}
	b.Run("MessagesThenBlobs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ms, err := s.Messages(b.Context(), "bench", hashes)
			if err != nil || len(ms) != 30 {
				b.Fatalf("Messages: %d, %v", len(ms), err)
			}
			if bs, err := s.Blobs(b.Context(), "bench", cp.BlobRefs); err != nil || len(bs) != 1 {
				b.Fatalf("Blobs: %d, %v", len(bs), err)
			}
		}
	})
	b.Run("Bodies", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ms, bs, err := s.Bodies(b.Context(), "bench", hashes, cp.BlobRefs); err != nil || len(ms) != 30 || len(bs) != 1 {
				b.Fatalf("Bodies: %d, %d, %v", len(ms), len(bs), err)
			}
		}
	})
}

// benchHistory10k lists a 10,000-checkpoint thread, whole and a page.
func benchHistory10k(b *testing.B, s store.Store) {
	fill(b, s, "bench", 10_000)
	for _, limit := range []int{0, 20} {
		name, want := "all", 10_000
		if limit > 0 {
			name, want = fmt.Sprintf("page%d", limit), limit
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h, err := s.History(b.Context(), "bench", 0, limit)
				if err != nil || len(h) != want {
					b.Fatalf("History: %d checkpoints, %v", len(h), err)
				}
			}
		})
	}
}

// benchDeleteThread: each iteration makes a thread (2 checkpoints, 6
// events, 1 write) and deletes it. Timing both keeps the run short where deleting is far
// cheaper than creating; ns/delete is the delete alone.
func benchDeleteThread(b *testing.B, s store.Store) {
	b.ReportAllocs()
	var i int
	var deleting time.Duration
	for b.Loop() {
		i++
		thread := fmt.Sprint("bench-", i)
		fill(b, s, thread, 2)
		if err := s.PutWrites(b.Context(), store.TaskWrites{ThreadID: thread, CheckpointID: 2, TaskID: "t", Writes: benchState}); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := s.DeleteThread(b.Context(), thread); err != nil {
			b.Fatal(err)
		}
		deleting += time.Since(start)
	}
	b.ReportMetric(float64(deleting.Nanoseconds())/float64(b.N), "ns/delete")
}

// benchPrune10kKeepLast100 is retention: each iteration fills a thread of
// 10,000 checkpoints (3 events each, task writes on every 100th) and prunes all but the
// newest 100 in one call. Filling dominates the run; ns/prune is the
// Prune call alone.
func benchPrune10kKeepLast100(b *testing.B, s store.Store) {
	const n, keep = 10_000, 100
	doomed := make([]int64, n-keep)
	for i := range doomed {
		doomed[i] = int64(i + 1)
	}
	var i int
	var pruning time.Duration
	for b.Loop() {
		i++
		thread := fmt.Sprint("bench-", i)
		fill(b, s, thread, n)
		for id := int64(100); id <= n; id += 100 {
			if err := s.PutWrites(b.Context(), store.TaskWrites{ThreadID: thread, CheckpointID: id, TaskID: "t", Writes: benchState}); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		var rebase []store.Rebase
		if first := int64(n - keep + 1); first%16 != 1 { // a delta: it needs a rebase
			rebase = []store.Rebase{{ID: first, State: benchState}}
		}
		res, err := s.Prune(b.Context(), thread, doomed, rebase)
		pruning += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Deleted) != n-keep || res.Events != 3*(n-keep) || res.Writes != (n-keep)/100 ||
			len(res.Rerooted) != 1 || res.Rerooted[0] != (store.Reroot{ID: n - keep + 1, From: n - keep}) {
			b.Fatalf("Prune deleted %d checkpoints, %d events, %d writes, re-rooted %v", len(res.Deleted), res.Events, res.Writes, res.Rerooted)
		}
	}
	b.ReportMetric(float64(pruning.Nanoseconds())/float64(b.N), "ns/prune")
}

// benchState is a ~2 KB state document.
var benchState = fmt.Appendf(nil, `{"v":2,"step":7,"source":"loop","messages":[%s],"summary":null}`,
	strings.TrimSuffix(strings.Repeat(`{"index":1,"role":"executor","text":"looked up the ticket and found the customer's order"},`, 24), ","))

// benchDelta is a ~600-byte delta, benchMeta a ~130-byte listing.
var (
	benchDelta = []byte(`{"format":2,"tasks":[{"id":"ac438e7ca3620722","node":"critic"}],"writes":[{"task":"642f2e97713f7ad2","node":"executor","w":[["messages",{"$m+":["04fb1150713f0162b200","b797134768ef48562ad3","ece51e896482a960b7b0"]}],["subtasks",{"$u":[{"$p":{"id":"t-1-shipping","result":"t-1-shipping: carrier UPS, lastScan 2026-09-07 14:40 sorting hub Utrecht, eta 2026-09-09.","status":"done","toolCalls":1}}]}],["budgetRemaining",-1]],"calls":[["executor",122,23,0,1796094488404943]]}]}`)
	benchMeta  = []byte(`{"step":162,"source":"loop","v":2,"depth":2,"nodes":["executor"],"calls":{"executor":3},"next":["critic"],"msgs":17,"bytes":3194,"row":1200}`)
)

var benchEvents = []store.Event{
	{Seq: 1, Type: "node.started", Payload: []byte(`{"node":"executor","task":"a1b2"}`)},
	{Seq: 2, Type: "model.called", Payload: []byte(`{"model":"mock","tokens":412,"ms":3}`)},
	{Seq: 3, Type: "node.finished", Payload: []byte(`{"node":"executor","task":"a1b2"}`)},
}

// benchPut writes checkpoints shaped like the engine's: a listing, and a
// base holding every value every 16th checkpoint, a delta otherwise.
func benchPut(b *testing.B, s store.Store, thread string, id int64) {
	cp := store.Checkpoint{ThreadID: thread, ID: id, ParentID: id - 1, Meta: benchMeta, State: benchDelta, Base: id%16 == 1}
	if cp.Base {
		cp.State = benchState
	}
	if err := s.PutCheckpoint(b.Context(), cp, benchEvents); err != nil {
		b.Fatal(err)
	}
}

func fill(b *testing.B, s store.Store, thread string, n int64) {
	for id := int64(1); id <= n; id++ {
		benchPut(b, s, thread, id)
	}
}
