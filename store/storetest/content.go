package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"rewind/store"
)

// Messages, Blobs, Bodies and Size: message and blob bodies stored once by
// hash, both read at once, and a thread's size.

func message(index int64, text string) store.Message {
	body := fmt.Appendf(nil, `{"index":%d,"role":"user","content":%s}`, index, jsonString(text))
	return store.Message{Hash: store.ContentHash(body), Index: index, Body: body}
}

func blob(text string) store.Blob {
	body := []byte(jsonString(text))
	return store.Blob{Hash: store.ContentHash(body), Body: body}
}

func testMessagesOnce(t *testing.T, s store.Store) {
	ctx := t.Context()
	m1, m2 := message(1, "where is SO20260901?"), message(2, "it shipped")
	cp1 := checkpoint("t", 1, 0)
	cp1.Messages = []store.Message{m1}
	put(t, s, cp1)
	cp2 := delta("t", 2, 1)
	cp2.Messages = []store.Message{m1, m2} // m1 again: already stored
	put(t, s, cp2)
	// A fork writes a different #2.
	f2 := message(2, "it was cancelled")
	cp3 := delta("t", 3, 1)
	cp3.Messages = []store.Message{f2}
	put(t, s, cp3)

	got, err := s.Messages(ctx, "t", []string{m2.Hash, m1.Hash, m1.Hash, strings.Repeat("0", store.HashLen)})
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	slices.SortFunc(got, func(a, b store.Message) int { return int(a.Index - b.Index) })
	if len(got) != 2 || string(got[0].Body) != string(m1.Body) || string(got[1].Body) != string(m2.Body) {
		t.Fatalf("Messages = %d messages %v, want #1 and #2 byte for byte", len(got), got)
	}
	if got[0].CheckpointID != 1 || got[1].CheckpointID != 2 || got[0].Hash != m1.Hash || got[0].CreatedAt.IsZero() {
		t.Errorf("Messages first stored by checkpoints %d and %d (hash %s), want 1 and 2", got[0].CheckpointID, got[1].CheckpointID, got[0].Hash)
	}
	at, err := s.MessagesAt(ctx, "t", 2)
	if err != nil {
		t.Fatalf("MessagesAt: %v", err)
	}
	if len(at) != 2 || at[0].Hash != m2.Hash || at[1].Hash != f2.Hash || at[1].CheckpointID != 3 {
		t.Errorf("MessagesAt(2) = %v, want the main branch's #2 then the fork's", at)
	}
	if none, err := s.MessagesAt(ctx, "t", 7); err != nil || len(none) != 0 {
		t.Errorf("MessagesAt(7) = %v, %v; want none", none, err)
	}
	if none, err := s.Messages(ctx, "nope", []string{m1.Hash}); err != nil || len(none) != 0 {
		t.Errorf("Messages of an unknown thread = %v, %v; want none", none, err)
	}
	// Messages go with their checkpoint or not at all.
	bad := delta("t", 3, 1)
	lost := message(3, "never stored")
	bad.Messages = []store.Message{lost}
	bad.State = []byte(`{"different":true}`)
	wantIs(t, s.PutCheckpoint(ctx, bad, nil), store.ErrConflict)
	if got, _ := s.Messages(ctx, "t", []string{lost.Hash}); len(got) != 0 {
		t.Errorf("a refused put stored its message")
	}
	forged := delta("t", 4, 3)
	forged.Messages = []store.Message{{Hash: m1.Hash, Index: 3, Body: []byte(`{"index":3}`)}}
	wantRefused(t, s.PutCheckpoint(ctx, forged, nil), "hashes to")
	forged.Messages = []store.Message{{Hash: "x", Index: 3, Body: []byte(`not json`)}}
	wantRefused(t, s.PutCheckpoint(ctx, forged, nil), "not valid JSON")
	if _, err := s.Get(ctx, "t", 4); err == nil {
		t.Errorf("a refused put stored its checkpoint")
	}
}

func testBlobsOnce(t *testing.T, s store.Store) {
	ctx := t.Context()
	big := blob(strings.Repeat("inline attachment ", 300))
	cp1 := checkpoint("t", 1, 0)
	cp1.Blobs, cp1.BlobRefs = []store.Blob{big}, []string{big.Hash}
	put(t, s, cp1)
	before, err := s.Size(ctx, "t")
	if err != nil {
		t.Fatalf("Size: %v", err)
	}
	for id := int64(2); id <= 5; id++ {
		cp := delta("t", id, id-1)
		cp.Blobs, cp.BlobRefs = []store.Blob{big}, []string{big.Hash}
		put(t, s, cp)
	}
	after, err := s.Size(ctx, "t")
	if err != nil {
		t.Fatalf("Size: %v", err)
	}
	if grew := after - before; grew >= int64(len(big.Body)) {
		t.Errorf("4 more checkpoints holding the same %d-byte blob grew the thread by %d bytes: a blob is stored once", len(big.Body), grew)
	}
	got, err := s.Blobs(ctx, "t", []string{big.Hash, big.Hash, strings.Repeat("a", store.HashLen)})
	if err != nil || len(got) != 1 || string(got[0].Body) != string(big.Body) || got[0].Hash != big.Hash {
		t.Fatalf("Blobs = %d blobs, %v; want the one, byte for byte", len(got), err)
	}
	bad := delta("t", 6, 5)
	bad.BlobRefs = []string{"not-a-hash"}
	wantRefused(t, s.PutCheckpoint(ctx, bad, nil), "not a content hash")
	bad.BlobRefs, bad.Blobs = nil, []store.Blob{{Hash: big.Hash, Body: []byte(`"other"`)}}
	wantRefused(t, s.PutCheckpoint(ctx, bad, nil), "hashes to")
}

// testBodies: Bodies gives what Messages and Blobs give for the same
// hashes, of its own thread only.
func testBodies(t *testing.T, s store.Store) {
	ctx := t.Context()
	m1, m2, other := message(1, "where is SO20260901?"), message(2, "it shipped"), message(1, "another thread's")
	b1, b2 := blob(strings.Repeat("a summary ", 200)), blob(strings.Repeat("another thread's blob ", 100))
	cp := checkpoint("t", 1, 0)
	cp.Messages, cp.Blobs, cp.BlobRefs = []store.Message{m1}, []store.Blob{b1}, []string{b1.Hash}
	put(t, s, cp)
	cp2 := delta("t", 2, 1)
	cp2.Messages = []store.Message{m2}
	put(t, s, cp2)
	cpu := checkpoint("u", 1, 0)
	cpu.Messages, cpu.Blobs, cpu.BlobRefs = []store.Message{other}, []store.Blob{b2}, []string{b2.Hash}
	put(t, s, cpu)

	unknown := strings.Repeat("0", store.HashLen)
	wantM := []string{m2.Hash, m1.Hash, m1.Hash, unknown, other.Hash}
	wantB := []string{b1.Hash, unknown, b1.Hash, b2.Hash}
	ms, bs, err := s.Bodies(ctx, "t", wantM, wantB)
	if err != nil {
		t.Fatalf("Bodies: %v", err)
	}
	msgs, err := s.Messages(ctx, "t", wantM)
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	blobs, err := s.Blobs(ctx, "t", wantB)
	if err != nil {
		t.Fatalf("Blobs: %v", err)
	}
	byHash := func(a, b store.Message) int { return strings.Compare(a.Hash, b.Hash) }
	slices.SortFunc(ms, byHash)
	slices.SortFunc(msgs, byHash)
	if len(ms) != 2 || len(msgs) != 2 {
		t.Fatalf("Bodies gave %d messages and Messages %d: want #1 and #2 of thread t, once each", len(ms), len(msgs))
	}
	for i := range ms {
		a, b := ms[i], msgs[i]
		if a.Hash != b.Hash || a.Index != b.Index || string(a.Body) != string(b.Body) || a.CheckpointID != b.CheckpointID ||
			!a.CreatedAt.Equal(b.CreatedAt) || a.ThreadID != b.ThreadID {
			t.Errorf("Bodies gave message %+v, Messages %+v", a, b)
		}
	}
	if len(bs) != 1 || len(blobs) != 1 || bs[0].Hash != b1.Hash || string(bs[0].Body) != string(b1.Body) || string(blobs[0].Body) != string(bs[0].Body) {
		t.Fatalf("Bodies gave %d blobs (%v): want thread t's one, byte for byte, as Blobs gives it", len(bs), bs)
	}
	if ms, bs, err := s.Bodies(ctx, "t", nil, nil); err != nil || len(ms)+len(bs) != 0 {
		t.Errorf("Bodies of no hashes = %v, %v, %v; want nothing", ms, bs, err)
	}
	if ms, bs, err := s.Bodies(ctx, "t", []string{m1.Hash}, nil); err != nil || len(ms) != 1 || len(bs) != 0 {
		t.Errorf("Bodies of one message = %d messages, %d blobs, %v; want the message alone", len(ms), len(bs), err)
	}
	if ms, bs, err := s.Bodies(ctx, "t", nil, []string{b1.Hash}); err != nil || len(ms) != 0 || len(bs) != 1 {
		t.Errorf("Bodies of one blob = %d messages, %d blobs, %v; want the blob alone", len(ms), len(bs), err)
	}
	if ms, bs, err := s.Bodies(ctx, "nope", wantM, wantB); err != nil || len(ms)+len(bs) != 0 {
		t.Errorf("Bodies of an unknown thread = %v, %v, %v; want nothing", ms, bs, err)
	}
}

// testBodiesOfAStretch: a rebuild asks for a stretch of its
// conversation, its first and last first and last (Bodies' contract), on
// a thread where a fork wrote other messages at the same indexes. Any
// order, a stretch with gaps, ends far apart or from both branches, an
// unknown end, messages repeated later (kept at their first index,
// outside the stretch): each gives the messages asked for, each once,
// and never the other branch's at the same index.
func testBodiesOfAStretch(t *testing.T, s store.Store) {
	ctx := t.Context()
	var main, fork []store.Message
	cp := checkpoint("t", 1, 0)
	for i := range 40 {
		main = append(main, message(int64(i+1), fmt.Sprintf("message %d of the main branch", i+1)))
	}
	cp.Messages = main
	put(t, s, cp)
	f := delta("t", 2, 1)
	for i := 20; i < 30; i++ {
		fork = append(fork, message(int64(i+1), fmt.Sprintf("message %d of the fork", i+1)))
	}
	f.Messages = fork
	put(t, s, f)
	// A later turn repeats earlier messages (an "ok", a tool's same
	// result): the thread keeps each at its first index, outside the
	// stretch of the turns around the repeat.
	again := delta("t", 3, 1)
	for i, m := range []store.Message{main[2], main[22], main[4], main[6], main[8]} {
		m.Index = int64(41 + i)
		again.Messages = append(again.Messages, m)
	}
	put(t, s, again)
	hashes := func(ms ...[]store.Message) []string {
		var out []string
		for _, m := range ms {
			for _, x := range m {
				out = append(out, x.Hash)
			}
		}
		return out
	}
	unknown := strings.Repeat("0", store.HashLen)
	reversed := slices.Clone(hashes(main[10:30]))
	slices.Reverse(reversed)
	cases := map[string][]string{
		"a stretch in order":           hashes(main[10:30]),
		"reversed":                     reversed,
		"with gaps":                    hashes(main[0:2], main[15:17], main[38:40]),
		"ends far apart":               hashes(main[0:1], main[20:25], main[39:40]),
		"the fork's stretch":           hashes(main[15:20], fork),
		"ends on both branches":        hashes(fork[0:1], main[21:29], fork[9:10]),
		"an unknown first":             append([]string{unknown}, hashes(main[5:10])...),
		"an unknown last, a duplicate": append(hashes(main[5:10], main[7:8]), unknown),
		"an unknown in the middle":     hashes(main[5:8], []store.Message{{Hash: unknown}}, main[8:10]),
		// main[22] shares its index with fork[2].
		"a repeat before the stretch":      hashes(main[30:35], main[2:3], main[35:40]),
		"two repeats, one at a fork's":     hashes(main[30:35], main[22:23], main[2:3], main[35:40]),
		"both of an index the forks share": hashes(main[30:35], main[22:23], fork[2:3], main[35:40]),
		"one past the stretch":             hashes(main[10:15], main[35:36], main[15:20]),
		"many repeats":                     hashes(main[30:35], main[2:3], main[4:5], main[6:7], main[8:9], main[35:40]),
		"a repeat first":                   hashes(main[2:3], main[30:40]),
		"a repeat last":                    hashes(main[30:40], main[4:5]),
	}
	for name, want := range cases {
		ms, bs, err := s.Bodies(ctx, "t", want, nil)
		if err != nil {
			t.Fatalf("%s: Bodies: %v", name, err)
		}
		if len(bs) != 0 {
			t.Errorf("%s: Bodies gave %d blobs; none was asked for", name, len(bs))
		}
		checkBodiesGave(t, name, ms, want, slices.Concat(main, fork))
	}
}

// checkBodiesGave wants ms to be the messages of all whose hashes are in
// want, each once, as stored.
func checkBodiesGave(t *testing.T, name string, ms []store.Message, want []string, all []store.Message) {
	t.Helper()
	got := map[string]store.Message{}
	for _, m := range ms {
		if _, twice := got[m.Hash]; twice {
			t.Errorf("%s: message #%d (%s) given twice", name, m.Index, m.Hash)
		}
		got[m.Hash] = m
	}
	asked := map[string]bool{}
	for _, h := range want {
		asked[h] = true
	}
	for _, m := range all {
		g, ok := got[m.Hash]
		switch {
		case ok && !asked[m.Hash]:
			t.Errorf("%s: Bodies gave #%d %s, not asked for", name, m.Index, m.Body)
		case !ok && asked[m.Hash]:
			t.Errorf("%s: Bodies left out #%d %s", name, m.Index, m.Body)
		case ok && (g.Index != m.Index || string(g.Body) != string(m.Body)):
			t.Errorf("%s: Bodies gave #%d %s for #%d %s", name, g.Index, g.Body, m.Index, m.Body)
		}
	}
	if len(got) > len(asked) {
		t.Errorf("%s: Bodies gave %d messages; %d were asked for", name, len(got), len(asked))
	}
}

func testSize(t *testing.T, s store.Store) {
	ctx := t.Context()
	if n, err := s.Size(ctx, "t"); err != nil || n != 0 {
		t.Fatalf("Size of an unknown thread = %d, %v; want 0", n, err)
	}
	cp := withMeta(checkpoint("t", 1, 0))
	m := message(1, strings.Repeat("x", 1000))
	b := blob("a blob")
	cp.Messages, cp.Blobs, cp.BlobRefs = []store.Message{m}, []store.Blob{b}, []string{b.Hash}
	put(t, s, cp, event("e", `{"n":1}`))
	n1, err := s.Size(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	min1 := int64(len(cp.State) + len(cp.Meta) + len(m.Body) + len(b.Body))
	if n1 < min1 || n1 > 2*min1+500 {
		t.Errorf("Size after one checkpoint = %d, want about %d (its documents and the message)", n1, min1)
	}
	cp2 := delta("t", 2, 1)
	cp2.Messages = []store.Message{m} // already stored
	put(t, s, cp2)
	n2, _ := s.Size(ctx, "t")
	if grew := n2 - n1; grew < int64(len(cp2.State)) || grew >= int64(len(m.Body)) {
		t.Errorf("a delta repeating a stored message grew the thread by %d bytes, want its own %d plus row overhead", grew, len(cp2.State))
	}
	putWrites(t, s, writes("t", 2, "a"))
	if n3, _ := s.Size(ctx, "t"); n3-n2 < int64(len(writes("t", 2, "a").Writes)) {
		t.Errorf("task writes grew the thread by %d bytes", n3-n2)
	}
	put(t, s, checkpoint("u", 1, 0))
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Size(ctx, "t"); n != 0 {
		t.Errorf("Size after DeleteThread = %d, want 0", n)
	}
	if got, _ := s.Messages(ctx, "t", []string{m.Hash}); len(got) != 0 {
		t.Errorf("DeleteThread left a message")
	}
	if got, _ := s.Blobs(ctx, "t", []string{b.Hash}); len(got) != 0 {
		t.Errorf("DeleteThread left a blob")
	}
	if n, _ := s.Size(ctx, "u"); n == 0 {
		t.Errorf("DeleteThread emptied another thread")
	}
}

// testMessagesIn: MessagesIn is MessagesAt of every index of the range at
// once, ordered by index, then checkpoint, then hash.
func testMessagesIn(t *testing.T, s store.Store) {
	ctx := t.Context()
	// Main branch @1 #1, @2 #2 #3, @4 #4 #5; a fork @3 from @1 writes its
	// own #2 and #3.
	main := []store.Message{message(1, "where is SO20260901?"), message(2, "it shipped"), message(3, "thanks"),
		message(4, "and a refund?"), message(5, "refunded")}
	fork := []store.Message{message(2, "it was cancelled"), message(3, "why?")}
	cp1 := checkpoint("t", 1, 0)
	cp1.Messages = main[:1]
	put(t, s, cp1)
	cp2 := delta("t", 2, 1)
	cp2.Messages = main[:3]
	put(t, s, cp2)
	cp3 := delta("t", 3, 1)
	cp3.Messages = append([]store.Message{main[0]}, fork...)
	put(t, s, cp3)
	cp4 := delta("t", 4, 2)
	cp4.Messages = main
	put(t, s, cp4)
	other := checkpoint("u", 1, 0)
	other.Messages = []store.Message{message(2, "another thread's")}
	put(t, s, other)

	type want struct {
		index, checkpoint int64
		body              []byte
	}
	check := func(from, to int64, wants ...want) {
		t.Helper()
		got, err := s.MessagesIn(ctx, "t", from, to)
		if err != nil {
			t.Fatalf("MessagesIn(%d, %d): %v", from, to, err)
		}
		ok := len(got) == len(wants)
		for i := 0; ok && i < len(got); i++ {
			g, w := got[i], wants[i]
			ok = g.Index == w.index && g.CheckpointID == w.checkpoint && string(g.Body) == string(w.body) &&
				g.Hash == store.ContentHash(w.body) && g.ThreadID == "t" && !g.CreatedAt.IsZero()
		}
		if !ok {
			var desc []string
			for _, g := range got {
				desc = append(desc, fmt.Sprintf("#%d@%d %s", g.Index, g.CheckpointID, g.Body))
			}
			t.Errorf("MessagesIn(%d, %d) = [%s], want %d messages by index, then checkpoint", from, to, strings.Join(desc, "; "), len(wants))
		}
		// The same as MessagesAt of each index.
		var at []store.Message
		for i := max(from, 0); i <= min(to, 6); i++ {
			ms, err := s.MessagesAt(ctx, "t", i)
			if err != nil {
				t.Fatalf("MessagesAt(%d): %v", i, err)
			}
			at = append(at, ms...)
		}
		if len(at) != len(got) {
			t.Errorf("MessagesIn(%d, %d) gave %d messages, MessagesAt of each index %d", from, to, len(got), len(at))
		}
	}
	// By index first: the fork's #2 (@3) comes before the main branch's #3 (@2).
	check(2, 3, want{2, 2, main[1].Body}, want{2, 3, fork[0].Body}, want{3, 2, main[2].Body}, want{3, 3, fork[1].Body})
	check(1, 5, want{1, 1, main[0].Body}, want{2, 2, main[1].Body}, want{2, 3, fork[0].Body}, want{3, 2, main[2].Body},
		want{3, 3, fork[1].Body}, want{4, 4, main[3].Body}, want{5, 4, main[4].Body})
	check(5, 5, want{5, 4, main[4].Body}) // both ends count
	check(4, 1<<62, want{4, 4, main[3].Body}, want{5, 4, main[4].Body})
	check(-3, 1, want{1, 1, main[0].Body})
	check(6, 9)
	check(3, 2) // from > to
	if got, err := s.MessagesIn(ctx, "nope", 1, 5); err != nil || len(got) != 0 {
		t.Errorf("MessagesIn of an unknown thread = %v, %v; want none", got, err)
	}
}

// sealedBody is a body the engine sealed (engine/seal's envelope): its
// hash names a plaintext the store never sees.
func sealedBody(hash, data string) []byte {
	return fmt.Appendf(nil, `{"$sealed":"k1","h":%q,"d":%q}`, hash, data)
}

// testSealedBodies: a sealed message or blob is stored under the hash it
// carries, read back byte for byte, and none of its words are searched
// (they are ciphertext); a sealed body carrying another hash is refused.
func testSealedBodies(t *testing.T, s store.Store) {
	ctx := t.Context()
	plain := message(1, "sealed away")
	m := store.Message{Hash: plain.Hash, Index: 1, Body: sealedBody(plain.Hash, "QUJDREVGR0hJSktM")}
	b := store.Blob{Hash: store.ContentHash([]byte(`"big"`)), Body: sealedBody(store.ContentHash([]byte(`"big"`)), "TU5PUFFSU1RVVldY")}
	cp := checkpoint("t", 1, 0)
	cp.Messages, cp.Blobs, cp.BlobRefs = []store.Message{m}, []store.Blob{b}, []string{b.Hash}
	put(t, s, cp)
	ms, bs, err := s.Bodies(ctx, "t", []string{m.Hash}, []string{b.Hash})
	if err != nil {
		t.Fatalf("Bodies: %v", err)
	}
	if len(ms) != 1 || string(ms[0].Body) != string(m.Body) || len(bs) != 1 || string(bs[0].Body) != string(b.Body) {
		t.Fatalf("Bodies = %v, %v; want the sealed message and blob byte for byte", ms, bs)
	}
	for _, q := range []string{"k1", "qujdrevgr0hjskts", "sealed"} {
		if found, err := s.Search(ctx, "t", q, 0); err != nil || len(found) != 0 {
			t.Errorf("Search(%q) = %v, %v; a sealed body has no words", q, found, err)
		}
	}
	bad := delta("t", 2, 1)
	bad.Messages = []store.Message{{Hash: plain.Hash, Index: 2, Body: sealedBody(store.ContentHash([]byte("other")), "QUJD")}}
	if err := s.PutCheckpoint(ctx, bad, nil); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("a sealed message carrying another hash: %v, want ErrInvalid", err)
	}
}
