package chainformat

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"rewind/store"
)

// A listing leaves out what it reads back: whatever compact drops, fill
// restores, through JSON; and a listing written before (every field
// spelled out, tokens under "tok" or none) reads as it always did.
func TestListingReadsBackWhatItLeavesOut(t *testing.T) {
	tok := map[string][3]int{"executor": {3, 358, 64}}
	two := map[string][3]int{"critic": {1, 10, 2}, "executor": {1, 5, 1}}
	cases := map[string]listing{
		"a loop step":               {Step: 3, Source: SourceLoop, SchemaVersion: 2, Nodes: []string{"executor"}, ModelCalls: map[string]int{"executor": 3}, Tokens: tok, Status: RunRunning, Messages: 4},
		"two roles":                 {Source: SourceLoop, Nodes: []string{"critic", "executor"}, ModelCalls: map[string]int{"critic": 1, "executor": 1}, Tokens: two, Status: RunDone},
		"nodes not the roles":       {Source: SourceLoop, Nodes: []string{"executor", "critic"}, ModelCalls: map[string]int{"critic": 1, "executor": 1}, Tokens: two, Status: RunRunning},
		"calls not the tokens":      {Source: SourceLoop, Nodes: []string{"executor"}, ModelCalls: map[string]int{"executor": 4}, Tokens: tok, Status: RunRunning},
		"tokens without calls":      {Source: SourceLoop, Nodes: []string{"executor"}, Tokens: tok, Status: RunRunning},
		"no nodes but tokens":       {Source: SourceLoop, ModelCalls: map[string]int{"executor": 3}, Tokens: tok, Status: RunRunning},
		"no status":                 {Source: SourceLoop, Nodes: []string{"reply"}},
		"a loop step without calls": {Source: SourceLoop, Nodes: []string{"summarizer"}, Status: RunRunning},
		"an input":                  {Source: SourceInput, Status: RunRunning, Next: []string{"planner"}, Bytes: 900, Row: 300},
		"bytes of the row alone":    {Source: SourceInput, Status: RunRunning, Bytes: 300, Row: 300},
		"a paused loop step":        {Source: SourceLoop, Status: RunPaused, Nodes: []string{"critic"}},
		"a turn's running totals":   {Source: SourceInput, Status: RunRunning, Next: []string{"planner"}, SumTurns: 4, SumThread: two, SumBranch: tok},
		"the first turn's totals":   {Source: SourceInput, Status: RunRunning, Next: []string{"planner"}, SumTurns: 1},
		"a turn's first checkpoint": {Source: SourceInput, Status: RunRunning, Next: []string{"planner"}, SumTurns: 1, Run: []string{"r1", "turn"}},
		"a resume's first":          {Source: SourceLoop, Status: RunDone, Nodes: []string{"reply"}, Run: []string{"r2", "resume", "r1"}},
		"a failed run's fixes":      {Source: SourceLoop, Status: "failed", Nodes: []string{"verify"}, Reason: "verification failed", Fixes: []string{"show", "new-turn"}},
		"the graph that wrote it":   {Source: SourceLoop, Status: RunRunning, Nodes: []string{"plan"}, Graph: "research"},
	}
	for name, l := range cases {
		b, err := json.Marshal(l.compact())
		if err != nil {
			t.Fatal(err)
		}
		var back listing
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.format != 3 {
			t.Errorf("%s: stored as %s, reads back as format %d", name, b, back.format)
		}
		back.format = 0
		if got := back.fill(); !reflect.DeepEqual(got, l) {
			t.Errorf("%s: stored as %s, reads back as %+v, want %+v", name, b, got, l)
		}
	}
	old := `{"step":401,"source":"loop","v":2,"depth":1,"nodes":["planner"],"calls":{"planner":1},"tok":{"planner":[1,94,120]},"next":["executor"],"status":"running","msgs":21}`
	var l listing
	if err := json.Unmarshal([]byte(old), &l); err != nil {
		t.Fatal(err)
	}
	want := listing{Step: 401, Source: SourceLoop, SchemaVersion: 2, Depth: 1, Nodes: []string{"planner"}, ModelCalls: map[string]int{"planner": 1},
		Tokens: map[string][3]int{"planner": {1, 94, 120}}, Next: []string{"executor"}, Status: RunRunning, Messages: 21}
	if got := l.fill(); !reflect.DeepEqual(got, want) {
		t.Errorf("a listing of the previous format reads as %+v, want %+v", got, want)
	}
	if b, _ := json.Marshal(cases["a loop step"].compact()); string(b) != `[3,2,0,4,0,0,{"executor":[3,358,64]}]` {
		t.Errorf("a loop step's listing is stored as %s", b)
	}
	// A field a newer rewind adds past the last is left alone; a newer
	// format is read as one.
	var newer listing
	if err := json.Unmarshal([]byte(`[3,2,0,4,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,"new"]`), &newer); err != nil || newer.Step != 3 || newer.Messages != 4 {
		t.Errorf("a listing with a field past the last reads as %+v (%v)", newer, err)
	}
	if err := json.Unmarshal([]byte(`[3,2,0,4,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,4]`), &newer); err != nil || newer.format != 4 {
		t.Errorf("a listing of format 4 reads as format %d (%v)", newer.format, err)
	}
	// Running totals follow the format, which is then written as 0 (3);
	// a rewind from before them stops reading at the format.
	b, err := json.Marshal(cases["a turn's running totals"].compact())
	if want := `[0,0,0,0,0,0,0,["planner"],0,"running","input",0,0,0,0,0,0,0,0,0,0,4,{"critic":[1,10,2],"executor":[1,5,1]},{"executor":[3,358,64]}]`; err != nil || string(b) != want {
		t.Errorf("a turn's running totals are stored as %s (%v), want %s", b, err, want)
	}
	// The run mark follows the totals; a run's later checkpoints leave it
	// off, and so cost nothing.
	b, err = json.Marshal(cases["a resume's first"].compact())
	if want := `[0,0,0,0,0,0,0,0,0,"done",0,["reply"],0,0,0,0,0,0,0,0,0,0,0,0,["r2","resume","r1"]]`; err != nil || string(b) != want {
		t.Errorf("a resume's run mark is stored as %s (%v), want %s", b, err, want)
	}
}

// The run statuses a listing stores (engine's RunRunning, …).
const (
	RunRunning = StatusRunning
	RunDone    = "done"
	RunPaused  = "paused"
)

// A failed run's fixes (position 25) read back by hand and through JSON;
// a listing stored before them (its reason naming the command itself)
// reads with none and its reason as it was; a position after them (a
// newer rewind's) is skipped.
func TestListingFixesReadByBothReaders(t *testing.T) {
	cases := map[string]struct {
		stored string
		fixes  []string
		reason string
	}{
		"with fixes": {`[1,2,0,0,0,0,0,0,0,"failed","loop",["verify"],0,0,0,0,0,0,"verification failed",0,0,0,0,0,0,["show","new-turn"]]`,
			[]string{"show", "new-turn"}, "verification failed"},
		"stored before": {`[1,2,0,0,0,0,0,0,0,"failed","loop",["verify"],0,0,0,0,0,0,"verification failed; review it (` + "`rewind show t`" + `)"]`,
			nil, "verification failed; review it (`rewind show t`)"},
		"a newer field after": {`[1,2,0,0,0,0,0,0,0,"failed","loop",["verify"],0,0,0,0,0,0,"x",0,0,0,0,0,0,["show"],0,{"new":1}]`,
			[]string{"show"}, "x"},
	}
	for name, c := range cases {
		var byHand, byJSON listing
		if !readListing([]byte(c.stored), &byHand, listWhole) {
			t.Fatalf("%s: %s does not read by hand", name, c.stored)
		}
		if err := json.Unmarshal([]byte(c.stored), &byJSON); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for reader, l := range map[string]listing{"by hand": byHand, "through JSON": byJSON} {
			if !reflect.DeepEqual(l.Fixes, c.fixes) || l.Reason != c.reason || l.Status != "failed" {
				t.Errorf("%s, read %s: fixes %q reason %q status %q, want %q %q failed", name, reader, l.Fixes, l.Reason, l.Status, c.fixes, c.reason)
			}
		}
	}
}

// The graph that wrote a checkpoint (position 26) reads back by hand,
// through JSON and in a log line's Brief; a listing stored before it
// names none (its reader takes the default graph); a position after it
// (a newer rewind's) is skipped.
func TestListingGraphReadByEveryReader(t *testing.T) {
	cases := map[string]struct{ stored, graph string }{
		"with its graph":      {`[1,1,0,2,0,0,0,0,0,0,0,["plan"],0,0,0,0,0,0,0,0,0,0,0,0,0,0,"research"]`, "research"},
		"stored before":       {`[1,1,0,2,0,0,0,0,0,0,0,["plan"],0,0,0,0,0,0,0,0,0,0,0,0,["r1","turn"]]`, ""},
		"a newer field after": {`[1,1,0,2,0,0,0,0,0,0,0,["plan"],0,0,0,0,0,0,0,0,0,0,0,0,0,0,"ticket",{"new":1}]`, "ticket"},
	}
	s := NewSchema(1, nil)
	for name, c := range cases {
		var byHand, byJSON listing
		if !readListing([]byte(c.stored), &byHand, listWhole) {
			t.Fatalf("%s: %s does not read by hand", name, c.stored)
		}
		if err := json.Unmarshal([]byte(c.stored), &byJSON); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		row := store.Checkpoint{ThreadID: "t", ID: 1, Meta: []byte(c.stored)}
		brief, err := s.Brief(row)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		listed, err := s.Listed(row)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for reader, got := range map[string]string{"by hand": byHand.Graph, "through JSON": byJSON.Graph, "as a log line": brief.Graph, "as a listing": listed.Metadata.Graph} {
			if got != c.graph {
				t.Errorf("%s, read %s: graph %q, want %q", name, reader, got, c.graph)
			}
		}
	}
	b, err := json.Marshal(listing{Source: SourceLoop, Status: RunRunning, Nodes: []string{"plan"}, Graph: "research"}.compact())
	if want := `[0,0,0,0,0,0,0,0,0,0,0,["plan"],0,0,0,0,0,0,0,0,0,0,0,0,0,0,"research"]`; err != nil || string(b) != want {
		t.Errorf("a listing's graph is stored as %s (%v), want %s", b, err, want)
	}
}

// A log line counts a listing's model calls from what it holds: its
// calls by role (a listing stored before tokens), else its tokens' calls;
// a loop checkpoint stored without its nodes names its tokens' roles,
// sorted. Read by hand or, when the hand reader gives up, through JSON.
func TestBriefCountsCallsAsStored(t *testing.T) {
	cases := map[string]struct {
		stored string
		calls  int
		nodes  []string
	}{
		"calls by role":     {`[1,1,0,2,0,0,0,0,0,0,"loop",["plan"],{"planner":2,"critic":3}]`, 5, []string{"plan"}},
		"calls and tokens":  {`[1,1,0,2,0,0,{"planner":[7,1,1]},0,0,0,"loop",["plan"],{"planner":2}]`, 2, []string{"plan"}},
		"tokens alone":      {`[1,1,0,2,0,0,{"planner":[4,1,1],"critic":[1,0,0]},0,0,0,"loop",["plan"]]`, 5, []string{"plan"}},
		"nodes from tokens": {`[1,1,0,2,0,0,{"planner":[4,1,1],"critic":[1,0,0]}]`, 5, []string{"critic", "planner"}},
		"old tokens' nodes": {`[1,1,0,2,0,0,0,0,0,0,0,0,{"a":1},0,0,0,0,0,0,{"z":[1,0,0],"b":[2,0,0]}]`, 1, []string{"b", "z"}},
		"none":              {`[1,1,0,2]`, 0, nil},
		"by JSON":           {`[1,1,0,2,0,0,{"planner":[4,1,1]},0,0,0,"",null,{"planner":6},0,0,0,0,0,0,0,0,0,0,0,0,0,"g",{"x":"\u0061"}]`, 6, []string{"planner"}},
	}
	s := NewSchema(1, nil)
	for name, c := range cases {
		if diff, _ := Hooks.ListingReadersAgree([]byte(c.stored)); diff != "" {
			t.Errorf("%s: %s", name, diff)
		}
		b, err := s.Brief(store.Checkpoint{ThreadID: "t", ID: 1, Meta: []byte(c.stored)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b.Calls != c.calls || !slices.Equal(b.Nodes, c.nodes) {
			t.Errorf("%s: %d calls by %q, want %d by %q", name, b.Calls, b.Nodes, c.calls, c.nodes)
		}
	}
}
