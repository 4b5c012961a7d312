package browse

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// What a person copies from a listing names the id it was printed for:
// the whole id, a prefix, the browser's "first…last" form, a namespace's
// "node:first…last|node:first…last"; a form several match is ambiguous,
// one none matches not found.
func TestMatchTheFormsReadersPrint(t *testing.T) {
	ids := []string{
		"1f1ed296-8a09-6881-8004-6404eb56cf41",
		"1f1ed296-8a03-6912-8003-98b606db64ab",
		"1f1ed296-8a0",
		"review:43a3a66f-710b-a293-51f3-ab25d2c8ecc4|inner:9a9a66f0-710b-a293-51f3-ab25d2c8ecc4",
		"review:43a3a66f-710b-a293-51f3-ab25d2c8ecc4|inner:5b5b66f0-710b-a293-51f3-ab25d2c8ecc4",
	}
	for _, c := range []struct {
		given string
		want  []string
	}{
		{"1f1ed296-8a0", []string{"1f1ed296-8a0"}}, // whole wins over the ids it starts
		{"1f1ed296-8a09", ids[:1]},
		{"1f1ed296…cf41", ids[:1]},
		{"1f1ed296…", ids[:3]},
		{"1f1ed296-8a0…", ids[:3]},
		{"1f1ed296…64ab", ids[1:2]},
		{"1f1ed296…8a09…cf41", ids[:1]},
		{"1f1ed296…cf41…cf41", nil}, // pieces do not overlap
		{"review:43a3a66f…ecc4|inner:9a9a66f0…ecc4", ids[3:4]},
		{"review:43a3a66f…ecc4|inner:…", ids[3:]},
		{"review:43a3a66f…ecc4|inner:", nil}, // after the last …: how it ends
		{"review:", ids[3:]},
		{"2f", nil},
		{"1f1ed296…beef", nil},
	} {
		if got := Match(c.given, ids); !slices.Equal(got, c.want) {
			t.Errorf("Match(%q) = %q, want %q", c.given, got, c.want)
		}
	}

	if got, err := One("checkpoint", "1f1ed296…cf41", Match("1f1ed296…cf41", ids), "thread t", "rewind log t"); err != nil || got != ids[0] {
		t.Errorf("One of a unique form: %q, %v", got, err)
	}
	_, err := One("checkpoint", "1f1ed296", Match("1f1ed296", ids), `thread "t 1"`, "rewind log 't 1'")
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if !errors.Is(err, ErrAmbiguous) || errors.Is(err, ErrNotFound) || strings.Contains(msg, "\n") ||
		msg != `ambiguous: 1f1ed296 matches 1f1ed296-8a0, 1f1ed296-8a03-6912-8003-98b606db64ab, 1f1ed296-8a09-6881-8004-6404eb56cf41 (3 checkpoints of thread "t 1"; give more characters)` {
		t.Errorf("One of an ambiguous prefix: %v", err)
	}
	many := []string{"a1", "a2", "a3", "a4", "a5"}
	if _, err := One("namespace", "a", many, "thread t", "rewind threads"); err == nil || !strings.Contains(err.Error(), "a1, a2, a3, … 2 more (5 namespaces") {
		t.Errorf("One of a prefix five match: %v, want three named and 2 more", err)
	}
	_, err = One("checkpoint", "zz\x1b[2J", nil, "thread t", "rewind log t")
	if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrAmbiguous) || strings.Contains(err.Error(), "\x1b") ||
		!strings.HasSuffix(err.Error(), "list them with `rewind log t`") {
		t.Errorf("One of an unknown id: %v, want not found, quoted, naming the fix", err)
	}
}

// A thread's status is read from its newest checkpoint as LangGraph's
// get_state tells it: nothing due is idle; a task that raised is an error
// (LangGraph.js's aborted siblings are not what failed); a task that
// called interrupt() is interrupted at its node, with its subgraph run;
// tasks due that stored nothing wait before their nodes.
func TestStatusOf(t *testing.T) {
	nss := []Namespace{{}, {NS: "review:t2", Node: "review", Task: "t2"}}
	due := Listing{ID: "c9", Next: []Task{{Node: "worker"}, {Node: "worker"}, {Node: "review"}}}
	for _, c := range []struct {
		name string
		l    Listing
		ws   []TaskWrites
		want Status
	}{
		{"idle", Listing{ID: "c1"}, nil, Status{State: StateIdle, Checkpoint: "c1"}},
		{"before", due, nil, Status{State: StateInterrupted, Where: "before worker review", Checkpoint: "c9"}},
		{"error", due, []TaskWrites{
			{Task: "t0", Node: "worker", Writes: []Write{{Channel: "x"}}},
			{Task: "t1", Node: "worker", Error: "AbortError: aborted"},
			{Task: "t3", Node: "worker", Error: "Error: worker 1 exploded"},
		}, Status{State: StateError, Where: "worker", Error: "Error: worker 1 exploded", Errors: 2, Checkpoint: "c9"}},
		{"interrupt", due, []TaskWrites{
			{Task: "t2", Node: "review", Interrupts: []Interrupt{{ID: "i1", Value: "approve?"}}},
		}, Status{State: StateInterrupted, Where: "review", NS: "review:t2", Interrupts: []Interrupt{{ID: "i1", Value: "approve?"}}, Checkpoint: "c9"}},
	} {
		got := StatusOf(c.l, c.ws, nss)
		if got.State != c.want.State || got.Where != c.want.Where || got.NS != c.want.NS || got.Error != c.want.Error ||
			got.Errors != c.want.Errors || got.Checkpoint != c.want.Checkpoint || len(got.Interrupts) != len(c.want.Interrupts) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
