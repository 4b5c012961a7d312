package ticket

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The ledger keeps its newest FactPagesKept pages in the state; older
// ones retire behind a marker naming the last message they held, so the
// state stays bounded on a long thread, and a fact whose line retired is
// still kept (its message holds it verbatim), never counted lost.
func TestTheLedgerRetiresItsOldestPages(t *testing.T) {
	t.Parallel()
	var v json.RawMessage
	n := 0
	for range 400 {
		var lines []string
		for range 3 {
			n++
			lines = append(lines, fmt.Sprintf("#%d user: DL2026%04d; BT-%05d; 3.%02d m", n, n, 10000+n, n%100))
		}
		w, _ := json.Marshal(lines)
		var err error
		if v, err = appendFacts(v, w); err != nil {
			t.Fatal(err)
		}
	}
	var pages []string
	if err := json.Unmarshal(v, &pages); err != nil {
		t.Fatal(err)
	}
	through := retiredThrough(pages)
	if len(pages) != FactPagesKept+1 || through == 0 || len(v) > (FactPagesKept+1)*FactPageBytes {
		t.Fatalf("%d pages, %d bytes, retired through #%d: want %d pages and a marker", len(pages), len(v), through, FactPagesKept)
	}
	l := readLedger(pages)
	if _, ok := l[fmt.Sprintf("BT-%05d", 10000+n)]; !ok {
		t.Fatal("the newest line is not in the ledger")
	}
	if _, ok := l["BT-10001"]; ok {
		t.Fatal("a retired line is still read")
	}
	if !strings.Contains(factsText(pages), fmt.Sprintf("#%d user", n)) || strings.Contains(factsText(pages), "retired") {
		t.Fatalf("the model is shown the marker, or not the newest lines:\n%s", factsText(pages))
	}
	// A phase folded #1 away: its fact's line retired, so it is folded
	// (verbatim in the transcript), not lost; a fact past the marker with
	// no line is lost.
	sum := &Summary{Text: fmt.Sprintf("#1–#%d user: the site log, day by day", n), From: 1, To: n, Count: n}
	first := Message{Index: 1, Role: RoleUser, Speaker: "user", Content: "Day 1 (DL20260001): batch BT-10001 poured"}
	last := Message{Index: n, Role: RoleUser, Speaker: "user", Content: "Day x: batch BT-99999 poured"}
	r := CheckFidelity(sum, pages, []Message{first, last})
	var got []string
	for _, f := range r.Facts {
		got = append(got, fmt.Sprintf("#%d %s %s", f.Index, f.Fact, f.Status))
	}
	joined := strings.Join(got, ", ")
	if !strings.Contains(joined, "#1 BT-10001 "+FactFolded) || !strings.Contains(joined, fmt.Sprintf("#%d BT-99999 %s", n, FactLost)) {
		t.Fatalf("facts %s", joined)
	}
}
