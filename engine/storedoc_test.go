package engine_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

// checkReaders compares the hand readers with encoding/json on every row
// of the thread as the store gives it back (PostgreSQL's jsonb respaces
// and reorders): they must agree, and a row this rewind wrote must be
// read by hand (else the fast path is never taken).
func checkReaders(t *testing.T, st store.Store, thread string) {
	t.Helper()
	ctx := context.Background()
	listed, err := st.History(ctx, thread, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range listed {
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
	docs := storedRows(t)
	for i := 0; i < len(docs); i += 2 {
		if diff, fast := engine.ReadersAgree(docs[i], docs[i+1]); diff != "" || !fast {
			t.Fatalf("a stored row: %s (read by hand: %v)\n%s\n%s", diff, fast, docs[i], docs[i+1])
		}
	}
	rng := rand.New(rand.NewPCG(9, 9))
	pieces := [][]byte{[]byte(" "), []byte("\n"), []byte("0"), []byte("1.5"), []byte("-0"), []byte("1e2"), []byte("null"),
		[]byte(`"7"`), []byte("99999999999999999999"), []byte(`\u0061`), []byte(`"`), []byte(`\`), []byte(","), []byte("["),
		[]byte("]"), []byte("{"), []byte("}"), []byte(":"), []byte("true"), []byte(`"Writes":[],`), []byte(`"values":{},`),
		[]byte(`"x":1,`), []byte("\x00"), []byte("\xff"), []byte("é")}
	read, refused := 0, 0
	for n := 0; n < 40000; n++ {
		which := rng.IntN(len(docs))
		doc := bytes.Clone(docs[which])
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
		var meta, state []byte
		if which%2 == 0 {
			meta, state = doc, docs[which+1]
		} else {
			meta, state = docs[which-1], doc
		}
		diff, fast := engine.ReadersAgree(meta, state)
		if diff != "" {
			t.Fatalf("a broken document: %s\nmeta  %s\nstate %s", diff, meta, state)
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
