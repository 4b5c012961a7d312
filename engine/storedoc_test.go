package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

// checkReaders compares the hand readers with encoding/json on every row
// of the thread as the store gives it back (PostgreSQL's jsonb respaces
// and reorders): they must agree, and a row this rewind wrote must be
// read by hand (else the fast path is never taken). Each row's listing
// as browse.Source lists it (Schema.Brief) must be what History's gave.
func checkReaders(t *testing.T, e *engine.Engine, st store.Store, thread string) {
	t.Helper()
	ctx := context.Background()
	listed, err := st.History(ctx, thread, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range listed {
		if diff, brief := e.BrowseListingAgrees(l); diff != "" || !brief {
			t.Fatalf("checkpoint %d: %s (read brief: %v)\nmeta %s", l.ID, diff, brief, l.Meta)
		}
		row, err := st.Get(ctx, thread, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		diff, fast := engine.ReadersAgree(row.Meta, row.State)
		if diff != "" {
			t.Fatalf("checkpoint %d: the hand readers disagree with encoding/json: %s\nmeta %s\nstate %s", row.ID, diff, row.Meta, row.State)
		}
		if !fast {
			t.Fatalf("checkpoint %d: the hand readers gave up on a row this rewind wrote:\nmeta %s\nstate %s", row.ID, row.Meta, row.State)
		}
		if len(row.Rebased) > 0 {
			if diff, fast := engine.ReadersAgree(nil, row.Rebased); diff != "" || !fast {
				t.Fatalf("checkpoint %d: its rebased document: %s (read by hand: %v)\n%s", row.ID, diff, fast, row.Rebased)
			}
		}
	}
}

// storedRows are the documents of a short ticket thread: turns, a fork,
// an approval interrupt and its pending tasks, compaction.
func storedRows(t *testing.T) [][]byte {
	t.Helper()
	ctx := t.Context()
	st := memory.New()
	e, err := ticket.NewEngine(st, ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	defer engine.SetBaseEvery(4)()
	for i := 0; i < 6; i++ {
		if _, err := e.Run(ctx, "r", ticket.Input(sentences[i%len(sentences)]), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Fork(ctx, "r", 3, ticket.Input(sentences[1]), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(ctx, "r", ticket.Input(sentences[2]), engine.RunConfig{InterruptBefore: []string{"reply"}}); err != nil {
		t.Fatal(err)
	}
	listed, err := st.History(ctx, "r", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, l := range listed {
		row, err := st.Get(ctx, "r", l.ID)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, row.Meta, row.State)
	}
	return docs
}

// TestFastReadersAgree breaks stored documents at random (a byte changed,
// dropped or doubled, white space, a key in other case, a number spelled
// otherwise, an escape) and checks that whenever the hand readers read a
// document they read what encoding/json reads, and that they give up on
// what encoding/json refuses.
func TestFastReadersAgree(t *testing.T) {
	docs := storedRows(t) // before t.Parallel: it sets the process's base interval
	t.Parallel()          // 40,000 documents, all CPU: beside the tests that wait on a store
	e := ticketEngine(t, memory.New())
	for i := 0; i < len(docs); i += 2 {
		if diff, fast := engine.ReadersAgree(docs[i], docs[i+1]); diff != "" || !fast {
			t.Fatalf("a stored row: %s (read by hand: %v)\n%s\n%s", diff, fast, docs[i], docs[i+1])
		}
		checkBrowseListing(t, e, docs[i], docs[i+1], true)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	pieces := [][]byte{[]byte(" "), []byte("\n"), []byte("0"), []byte("1.5"), []byte("-0"), []byte("1e2"), []byte("null"),
		[]byte(`"7"`), []byte("99999999999999999999"), []byte(`\u0061`), []byte(`"`), []byte(`\`), []byte(","), []byte("["),
		[]byte("]"), []byte("{"), []byte("}"), []byte(":"), []byte("true"), []byte(`"Writes":[],`), []byte(`"values":{},`),
		[]byte(`"x":1,`), []byte("\x00"), []byte("\xff"), []byte("é")}
	read, refused := 0, 0
	for n := 0; n < 40000; n++ {
		which := rng.IntN(len(docs))
		doc := breakDoc(rng, bytes.Clone(docs[which]), pieces)
		// Only the broken document is read again: its intact partner read
		// the same (and by hand) in the loop above.
		var meta, state []byte
		var diff string
		var fast bool
		if which%2 == 0 {
			meta, state = doc, docs[which+1]
			diff, fast = engine.ListingReadersAgree(meta)
		} else {
			meta, state = docs[which-1], doc
			diff, fast = engine.ReadersAgree(nil, state)
		}
		if diff != "" {
			t.Fatalf("a broken document: %s\nmeta  %s\nstate %s", diff, meta, state)
		}
		if which%2 == 0 { // a listing reads its meta alone: an intact one listed above
			checkBrowseListing(t, e, meta, state, false)
		}
		if fast {
			read++
		} else {
			refused++
		}
	}
	if read < 1000 || refused < 1000 {
		t.Fatalf("of the broken documents the hand readers read %d and left %d to encoding/json: the test tries too little of one", read, refused)
	}
	t.Logf("hand readers read %d broken documents and left %d to encoding/json", read, refused)
}

// breakDoc changes doc at random in one or two places: a byte changed,
// dropped or doubled, a piece inserted, a letter in other case, a number
// spelled otherwise.
func breakDoc(rng *rand.Rand, doc []byte, pieces [][]byte) []byte {
	for m := 1 + rng.IntN(2); m > 0 && len(doc) > 0; m-- {
		at := rng.IntN(len(doc))
		switch rng.IntN(6) {
		case 0: // change a byte
			p := pieces[rng.IntN(len(pieces))]
			doc = append(doc[:at:at], append(p, doc[at+1:]...)...)
		case 1: // drop a byte
			doc = append(doc[:at:at], doc[at+1:]...)
		case 2: // insert
			p := pieces[rng.IntN(len(pieces))]
			doc = append(doc[:at:at], append(p, doc[at:]...)...)
		case 3: // double a piece
			end := min(len(doc), at+1+rng.IntN(12))
			doc = append(doc[:end:end], doc[at:]...)
		case 4: // a letter in other case
			for j := at; j < len(doc); j++ {
				if c := doc[j]; c >= 'a' && c <= 'z' {
					doc[j] = c - 'a' + 'A'
					break
				}
			}
		case 5: // a number spelled otherwise
			for j := at; j < len(doc); j++ {
				if c := doc[j]; c >= '0' && c <= '9' {
					p := pieces[2+rng.IntN(7)]
					doc = append(doc[:j:j], append(p, doc[j+1:]...)...)
					break
				}
			}
		}
	}
	return doc
}

// checkBrowseListing checks that a row of meta and state lists through
// browse.Source as through Engine.History; stored, that Schema.Brief read
// it (a row this rewind wrote).
func checkBrowseListing(t *testing.T, e *engine.Engine, meta, state []byte, stored bool) {
	t.Helper()
	row := store.Checkpoint{ThreadID: "r", ID: 9, ParentID: 8, Meta: meta, State: state}
	if diff, brief := e.BrowseListingAgrees(row); diff != "" || stored && !brief {
		t.Fatalf("a row as browse.Source lists it: %s (read brief: %v)\nmeta  %s", diff, brief, meta)
	}
}

// randomJSON is a random JSON value with the escapes, numbers and nesting
// stored values have, and some they do not.
func randomJSON(rng *rand.Rand, depth int) string {
	strs := []string{`""`, `"a"`, `"id"`, `"t-1-refund"`, `"é ü"`, `"a\"b"`, `"a\\b"`, `"\n\t\r\b\f\/"`, `"\u00e9"`, `"\u0000"`,
		`"\ud83d\ude00"`, `"\ud800"`, `"<&>"`, "\"\u2028\""}
	nums := []string{"0", "-0", "1", "-12", "1.5", "1e3", "-2.5E-3", "12345678901234567890", "0.0"}
	switch k := rng.IntN(8); {
	case depth > 4 || k < 2:
		return strs[rng.IntN(len(strs))]
	case k < 4:
		return nums[rng.IntN(len(nums))]
	case k == 4:
		return []string{"true", "false", "null"}[rng.IntN(3)]
	case k == 5:
		var b strings.Builder
		b.WriteByte('[')
		for i := rng.IntN(4); i > 0; i-- {
			b.WriteString(randomJSON(rng, depth+1))
			if i > 1 {
				b.WriteString([]string{",", " , ", ",\n"}[rng.IntN(3)])
			}
		}
		b.WriteByte(']')
		return b.String()
	default:
		var b strings.Builder
		b.WriteByte('{')
		for i := rng.IntN(4); i > 0; i-- {
			b.WriteString(strs[rng.IntN(len(strs))])
			b.WriteString([]string{":", " : "}[rng.IntN(2)])
			b.WriteString(randomJSON(rng, depth+1))
			if i > 1 {
				b.WriteByte(',')
			}
		}
		b.WriteByte('}')
		return b.String()
	}
}

// TestReadAnyAgrees compares the hand decoder of values with encoding/json
// on random values, the same values broken, and every value of stored
// rows.
func TestReadAnyAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	read, refused := 0, 0
	try := func(b []byte) {
		diff, fast := engine.ReadAnyAgrees(b)
		if diff != "" {
			t.Fatalf("%s: %s", b, diff)
		}
		if fast {
			read++
		} else {
			refused++
		}
	}
	for n := 0; n < 20000; n++ {
		b := []byte(randomJSON(rng, 0))
		try(b)
		if len(b) > 0 {
			at := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				try(append(b[:at:at], b[at+1:]...))
			case 1:
				try(append(b[:at:at], append([]byte{`"\,]}{[ 0x\x01`[rng.IntN(10)]}, b[at:]...)...))
			default:
				try(append(b[:at:at], append([]byte("\xff"), b[at:]...)...))
			}
		}
	}
	for _, doc := range storedRows(t) {
		try(doc)
	}
	if read < 5000 || refused < 1000 {
		t.Fatalf("the hand decoder read %d values and left %d to encoding/json: the test tries too little of one", read, refused)
	}
}

// randomObject is a JSON object with keys plain and not, spaced or not.
func randomObject(rng *rand.Rand, keys []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := rng.IntN(5); i > 0; i-- {
		k, _ := json.Marshal(keys[rng.IntN(len(keys))])
		b.Write(k)
		b.WriteString([]string{":", ": ", " :\n"}[rng.IntN(3)])
		b.WriteString(randomJSON(rng, 2))
		if i > 1 {
			b.WriteString([]string{",", ", "}[rng.IntN(2)])
		}
	}
	b.WriteByte('}')
	return b.String()
}

// TestFastValuesAgree compares the replay's fast value functions
// (fastvalues.go) with their encoding/json forms on random input.
func TestFastValuesAgree(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	keys := []string{"a", "b", "count", "text", "to", "from", "A", "<k>", "é", "a\"b", "$o", "$d", "$w", "$O", "replace", "Replace", "x y"}
	fast := map[string]int{}
	tried := map[string]int{}
	try := func(what string, a, b []byte, blobs map[string]json.RawMessage) {
		tried[what]++
		diff, ok := engine.FastValuesAgree(what, a, b, blobs)
		if diff != "" {
			t.Fatalf("%s(%s, %s): %s", what, a, b, diff)
		}
		if ok {
			fast[what]++
		}
	}
	blobs := map[string]json.RawMessage{}
	var hashes []string
	for i := 0; i < 4; i++ {
		body, _ := json.Marshal(strings.Repeat(fmt.Sprintf("text %d <&> é ", i), 100+rng.IntN(100)))
		h := store.ContentHash(body)
		blobs[h], hashes = body, append(hashes, h)
	}
	hashes = append(hashes, "0123456789abcdef0123") // missing
	for n := 0; n < 4000; n++ {
		cur, write := randomObject(rng, keys), randomObject(rng, keys)
		try("merge", []byte(cur), []byte(write), nil)
		try("members", []byte(cur), nil, nil)
		try("replace", []byte(cur), nil, nil)
		try("compact", []byte(randomJSON(rng, 0)), nil, nil)
		var patch string
		switch rng.IntN(4) {
		case 0:
			patch = `{"$w":` + randomJSON(rng, 1) + `}`
		case 1:
			patch = `{"$o":` + write + `}`
		case 2:
			patch = `{"$o": ` + write + `, "$d": ["a","text","é"]}`
		default:
			patch = randomObject(rng, keys)
		}
		try("unpatch", []byte(cur), []byte(patch), nil)
		a, b := rng.Int64N(2e15)-1e15, rng.Int64N(2e15)-1e15
		if rng.IntN(4) == 0 {
			a, b = rng.Int64N(20)-10, rng.Int64N(20)-10
		}
		try("counter", strconv.AppendInt(nil, a, 10), strconv.AppendInt(nil, b, 10), nil)
		// Blob references in a value, as stored (canonical) or respaced.
		ref := func() string {
			return fmt.Sprintf(`{"$b":"%s"}`, hashes[rng.IntN(len(hashes))])
		}
		val := fmt.Sprintf(`{"count":%d,"text":%s,"more":[%s,%s]}`, n, ref(), ref(), randomJSON(rng, 2))
		switch rng.IntN(4) {
		case 0:
			val = strings.ReplaceAll(val, `:`, `: `)
		case 1:
			val = strings.Replace(val, `{"$b"`, `{"$lit":{"$b"`, 1) + "}"
		case 2:
			val = strings.Replace(val, `"$b"`, `"x":1,"$b"`, 1)
		}
		try("unblob", []byte(val), nil, blobs)
	}
	for _, body := range blobs {
		try("unzip", engine.ZipBlob(body), nil, nil)
	}
	for _, what := range []string{"merge", "members", "replace", "compact", "unpatch", "counter", "unblob", "unzip"} {
		if fast[what] == 0 || what != "compact" && what != "counter" && what != "unzip" && fast[what] == tried[what] {
			t.Errorf("%s: the fast form took %d of %d inputs: the test tries too little of one way", what, fast[what], tried[what])
		}
	}
}

// TestKeyedReplayAgrees replays stored patches of a keyed channel (as
// patchWrite makes them, and broken) by the fast form and by
// encoding/json.
func TestKeyedReplayAgrees(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	item := func() string {
		id := []string{`"a"`, `"b"`, `"c"`, `1`, `"1"`}[rng.IntN(5)]
		return fmt.Sprintf(`{"id":%s,"status":%s,"n":%s}`, id, randomJSON(rng, 3), randomJSON(rng, 3))
	}
	list := func(n int) string {
		var items []string
		for range n {
			items = append(items, item())
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	fast := 0
	for n := 0; n < 5000; n++ {
		cur, write := list(rng.IntN(4)), list(1+rng.IntN(3))
		stored := string(engine.PatchWrite([]byte(cur), []byte(write)))
		switch rng.IntN(6) {
		case 0:
			stored = strings.Replace(stored, `"$d"`, `"$D"`, 1)
		case 1:
			stored = strings.Replace(stored, `"$p":{`, `"$p":null,"x":{`, 1)
		case 2:
			stored = strings.Replace(stored, `"$d":[`, `"$d":[1,`, 1)
		case 3:
			stored = strings.Replace(stored, `{"$u":[`, `{"$u":[null,`, 1)
		case 4:
			stored = strings.Replace(stored, `{"$p"`, `{"$q":1,"$p"`, 1)
		}
		diff, ok := engine.KeyedApplyAgrees([]byte(cur), []byte(stored))
		if diff != "" {
			t.Fatalf("%s on %s: %s", stored, cur, diff)
		}
		if ok {
			fast++
		}
	}
	if fast < 500 || fast > 4900 {
		t.Fatalf("the fast form took %d of 5000 patches: the test tries too little of one way", fast)
	}
}

// checkReplayAll rebuilds every checkpoint of the thread twice in new
// engines, skipping the writes a newer one replaces (as Get does) and
// replaying them all: values, tasks and applied writes must be the same
// bytes.
func checkReplayAll(t *testing.T, st store.Store, thread string) {
	t.Helper()
	checkReplayAllWith(t, st, thread, func() *engine.Engine {
		e, err := ticket.NewEngine(st, ticket.NewMock())
		if err != nil {
			t.Fatal(err)
		}
		return e
	}, nil)
}

// checkReplayAllWith is checkReplayAll with the engine newEngine makes;
// each, when set, is also given every checkpoint as the skipping read
// rebuilt it in its new engine (a caller's own checks of a cold Get,
// without rebuilding it once more).
func checkReplayAllWith(t *testing.T, st store.Store, thread string, newEngine func() *engine.Engine, each func(id int64, cp engine.Checkpoint)) {
	t.Helper()
	ctx := context.Background()
	listed, err := st.History(ctx, thread, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	read := func(id int64, replayAll bool) engine.Checkpoint {
		e := newEngine()
		if replayAll {
			engine.Tune(e, 0, true)
		}
		cp, err := e.Get(ctx, thread, id)
		if err != nil {
			t.Fatal(err)
		}
		return cp
	}
	for _, l := range listed {
		skipping, all := read(l.ID, false), read(l.ID, true)
		if each != nil {
			each(l.ID, skipping)
		}
		a, _ := json.Marshal([]any{skipping.Values, skipping.Tasks, skipping.Applied})
		b, _ := json.Marshal([]any{all.Values, all.Tasks, all.Applied})
		if !bytes.Equal(a, b) {
			t.Fatalf("checkpoint %d reads otherwise when a replay skips replaced writes:\n%s\nreplaying all:\n%s", l.ID, a, b)
		}
	}
}

// TestSkipStringReadsEveryByte puts each byte that can end or break a
// string's plain run (and its neighbours in value) at every place of an
// eight-byte word: the word-at-a-time reader must stop where a reader of
// one byte at a time stops, and agree with encoding/json.
func TestSkipStringReadsEveryByte(t *testing.T) {
	t.Parallel()
	special := []byte{0x00, 0x01, 0x1f, 0x20, 0x21, '"', '#', '\\', ']', 0x7f, 0x80, 0xa2, 0xdc, 0xff}
	for n := 0; n < 20; n++ {
		for at := 0; at < n; at++ {
			for _, c := range special {
				body := bytes.Repeat([]byte("a"), n)
				body[at] = c
				doc := append(append([]byte(`"`), body...), `"tail`...)
				got, ok := engine.SkipString(doc)
				// One byte at a time: the string ends at the first quote
				// not escaped; a control byte or a bad escape refuses it.
				want, wantOK := 1, false
				for want < len(doc) {
					b := doc[want]
					if b == '"' {
						want, wantOK = want+1, true
						break
					}
					if b < 0x20 {
						break
					}
					if b == '\\' {
						if want+1 < len(doc) && bytes.IndexByte([]byte(`"\/bfnrt`), doc[want+1]) >= 0 {
							want += 2
							continue
						}
						break
					}
					want++
				}
				if ok != wantOK || ok && got != want {
					t.Fatalf("%q: read to %d (%v), want %d (%v)", doc, got, ok, want, wantOK)
				}
				var s string
				if jsonOK := json.Unmarshal(doc[:max(got, 1)], &s) == nil; ok && !jsonOK {
					t.Fatalf("%q: read as a string up to %d, which encoding/json refuses", doc, got)
				}
			}
		}
	}
}

// BenchmarkSkipString reads a message text as a head snapshot holds it
// (plain) and one full of escapes (a tool result quoting JSON).
func BenchmarkSkipString(b *testing.B) {
	for _, c := range []struct{ name, text string }{
		{"plain", strings.Repeat("Here is where things stand: eligible true, window 30 days from delivery. ", 3)},
		{"escaped", strings.Repeat(`t-2-payment: charges [{\"amount\":\"152.32 EUR\"}]. Verified per review: list each charge `, 2)},
	} {
		doc := []byte(`"` + c.text + `"`)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if n, ok := engine.SkipString(doc); !ok || n != len(doc) {
					b.Fatal(n, ok)
				}
			}
		})
	}
}
