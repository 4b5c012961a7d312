package storetest

import (
	"fmt"
	"strings"
	"testing"

	"rewind/store"
)

// Search: the thread's messages that hold a word beginning with each word
// of the query, on every branch, from the index its puts keep.

// spoken is a message as the ticket graph writes one: a speaker and its
// words, under keys a search must not find.
func spoken(index int64, speaker, text string) store.Message {
	body := fmt.Appendf(nil, `{"index":%d,"role":"user","speaker":%s,"content":%s}`, index, jsonString(speaker), jsonString(text))
	return store.Message{Hash: store.ContentHash(body), Index: index, Body: body}
}

// found are the hits' messages as "#index@checkpoint", in the order given.
func found(t *testing.T, s store.Store, thread, query string, limit int) string {
	t.Helper()
	got, err := s.Search(t.Context(), thread, query, limit)
	if err != nil {
		t.Fatalf("Search(%q, %q): %v", clip(thread), clip(query), err)
	}
	var out []string
	for _, m := range got {
		if m.ThreadID != "" && m.ThreadID != thread {
			t.Errorf("Search(%q) gave a message of thread %q", clip(thread), clip(m.ThreadID))
		}
		out = append(out, fmt.Sprintf("#%d@%d", m.Index, m.CheckpointID))
	}
	return strings.Join(out, " ")
}

func testSearch(t *testing.T, s store.Store) {
	ctx := t.Context()
	long := strings.Repeat("x", 150) + "tail"
	m1 := spoken(1, "customer", "Where is order SO20260901? The café said it SHIPPED.")
	m2 := spoken(2, "agent", "It shipped on Monday from the 東京 depot.")
	m3 := spoken(3, "customer", "Ünïcode works? "+long)
	cp1 := checkpoint("t", 1, 0)
	cp1.Messages = []store.Message{m1}
	put(t, s, cp1)
	cp2 := delta("t", 2, 1)
	cp2.Messages = []store.Message{m1, m2} // m1 again: stored and found once
	put(t, s, cp2)
	cp3 := delta("t", 3, 2)
	cp3.Messages = []store.Message{m3}
	put(t, s, cp3)
	// A fork of @1 writes another #2.
	f2 := spoken(2, "agent", "It was cancelled before it shipped.")
	cp4 := delta("t", 4, 1)
	cp4.Messages = []store.Message{f2}
	put(t, s, cp4)
	// Another thread says the same words.
	other := checkpoint("other", 1, 0)
	other.Messages = []store.Message{spoken(1, "customer", "Where is my order? shipped?")}
	put(t, s, other)

	for _, c := range []struct{ query, want string }{
		{"shipped", "#1@1 #2@2 #2@4"},      // every branch, ordered by index then checkpoint
		{"SHIP", "#1@1 #2@2 #2@4"},         // a word's beginning, without case
		{"shipped cancelled", "#2@4"},      // every word
		{"cancelled shipped", "#2@4"},      // in any order
		{"cancel, shipped!", "#2@4"},       // punctuation is not a word
		{"so2026", "#1@1"},                 // letters and digits make one word
		{"20260901", ""},                   // the middle of a word is not its beginning
		{"CAFÉ", "#1@1"},                   // case beyond ASCII
		{"unicode", ""},                    // accents are kept
		{"ÜNÏ", "#3@3"},                    //
		{"東京", "#2@2"},                     // a run of letters of any script
		{"customer", "#1@1 #3@3"},          // string values are searched: the speaker too
		{"content", ""},                    // keys are not
		{"index", ""},                      //
		{long, "#3@3"},                     // a long word, cut the same way on both sides
		{"T", "#1@1 #2@2"},                 // "the": nothing a store adds to its index is found
		{"nowhere", ""},                    //
		{"shipped nowhere", ""},            //
		{`" OR * NEAR( 'x':* & !ship`, ""}, // the store's query syntax is not the caller's
		{`"shipped" OR`, "#1@1"},           // OR is a word here: "order" begins with it
		{`cancelled") OR ("where`, ""},     // nor can a quote end the store's phrase
	} {
		if got := found(t, s, "t", c.query, 0); got != c.want {
			t.Errorf("Search(%q) = %q, want %q", clip(c.query), got, c.want)
		}
	}
	if got := found(t, s, "t", "shipped", 2); got != "#1@1 #2@2" {
		t.Errorf("Search(shipped, limit 2) = %q, want the first two: #1@1 #2@2", got)
	}
	if got := found(t, s, "other", "shipped where", 0); got != "#1@1" {
		t.Errorf("Search of the other thread = %q, want its own #1@1", got)
	}
	if got := found(t, s, "nope", "shipped", 0); got != "" {
		t.Errorf("Search of an unknown thread = %q, want none", got)
	}
	var words []string
	for i := range store.MaxQueryWords + 1 {
		words = append(words, fmt.Sprint("shipped", i))
	}
	tooMany := strings.Join(words, " ")
	hits, err := s.Search(ctx, "t", "cancelled", 0)
	if err != nil || len(hits) != 1 || string(hits[0].Body) != string(f2.Body) || hits[0].Hash != f2.Hash || hits[0].CreatedAt.IsZero() {
		t.Errorf("Search(cancelled) = %v, %v; want the fork's #2 whole, byte for byte", hits, err)
	}
	for _, q := range []string{"", "   ", `"*"`, "!?-", tooMany} {
		if _, err := s.Search(ctx, "t", q, 0); err == nil {
			t.Errorf("Search(%q) with no word or too many: no error, want ErrInvalid", clip(q))
		} else {
			wantIs(t, err, store.ErrInvalid)
		}
	}

	// A refused put indexes nothing.
	bad := delta("t", 4, 1)
	bad.State = []byte(`{"different":true}`)
	bad.Messages = []store.Message{spoken(5, "agent", "refunded")}
	wantIs(t, s.PutCheckpoint(ctx, bad, nil), store.ErrConflict)
	if got := found(t, s, "t", "refunded", 0); got != "" {
		t.Errorf("a refused put's message is found: %q", got)
	}
}

// testSearchAfterPruneAndDelete: a pruned checkpoint's messages are still
// found (messages are the transcript); a deleted thread's never, also when
// its id is used again.
func testSearchAfterPruneAndDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	cp1 := checkpoint("t", 1, 0)
	cp1.Messages = []store.Message{spoken(1, "customer", "a parcel to Reykjavík")}
	put(t, s, cp1)
	cp2 := checkpoint("t", 2, 1)
	cp2.Messages = []store.Message{spoken(2, "agent", "the parcel left")}
	put(t, s, cp2)
	if _, err := s.Prune(ctx, "t", []int64{1}, nil); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	if got := found(t, s, "t", "reykjavík parcel", 0); got != "#1@1" {
		t.Errorf("after pruning @1, Search = %q, want its message #1@1 still", got)
	}
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	if got := found(t, s, "t", "parcel", 0); got != "" {
		t.Errorf("after DeleteThread, Search = %q, want none", got)
	}
	again := checkpoint("t", 1, 0)
	again.Messages = []store.Message{spoken(1, "customer", "a new parcel")}
	put(t, s, again)
	if got := found(t, s, "t", "parcel", 0); got != "#1@1" {
		t.Errorf("the thread written again: Search = %q, want its new #1@1 alone", got)
	}
	if got := found(t, s, "t", "reykjavík", 0); got != "" {
		t.Errorf("the thread written again finds its deleted life's words: %q", got)
	}
}
