package event

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// forms is every event type, with each form its emit sites write, as the
// typed payload and as the untyped map the emit site built before the
// payloads had types: the two must marshal to the same bytes, so events
// stored before and after read alike.
var forms = []struct {
	name string
	p    Payload
	old  any
}{
	{"input", Input{Channels: []string{"messages"}, Parent: 4}, map[string]any{"channels": []string{"messages"}, "parent": int64(4)}},
	{"input without channels", Input{Parent: 0}, map[string]any{"channels": []string(nil), "parent": int64(0)}},
	{"fork with input", Fork{Channels: []string{"messages"}, Parent: 7}, map[string]any{"channels": []string{"messages"}, "parent": int64(7)}},
	{"fork without input", Fork{Parent: 7}, map[string]any{"channels": []string(nil), "parent": int64(7)}},
	{"replay", Fork{Parent: 7, Replay: true, Tasks: "executor ×2"}, map[string]any{"parent": int64(7), "replay": true, "tasks": "executor ×2"}},
	{"replay of nothing", Fork{Parent: 7, Replay: true}, map[string]any{"parent": int64(7), "replay": true, "tasks": ""}},
	{"edit", Update{AsNode: "critic", Channels: []string{"subtasks"}}, map[string]any{"channels": []string{"subtasks"}, "asNode": "critic"}},
	{"edit as no node", Update{}, map[string]any{"channels": []string(nil), "asNode": ""}},
	{"discard", Update{Discarded: new(0)}, map[string]any{"discarded": 0}},
	{"step", StepStarted{Checkpoint: 3, Tasks: 4, ToRun: 2}, map[string]any{"checkpoint": int64(3), "tasks": 4, "toRun": 2}},
	{"node started", NodeStarted{Args: json.RawMessage(`{"subtask":"t-1"}`)}, map[string]any{"args": json.RawMessage(`{"subtask":"t-1"}`)}},
	{"node started without args", NodeStarted{Args: json.RawMessage("null")}, map[string]any{"args": json.RawMessage(nil)}},
	{"node finished", NodeFinished{DurationMs: 12}, map[string]any{"durationMs": int64(12)}},
	{"model call", ModelCalled{Role: "executor", PromptTokens: 10, CompletionTokens: 3, DurationMs: 5, Request: "abc"},
		map[string]any{"role": "executor", "promptTokens": 10, "completionTokens": 3, "durationMs": int64(5), "request": "abc"}},
	{"model call failed", ModelCalled{Role: "critic", Error: "boom", JSONMode: "schema", Request: "abc"},
		map[string]any{"role": "critic", "promptTokens": 0, "completionTokens": 0, "durationMs": int64(0), "error": "boom", "jsonMode": "schema", "request": "abc"}},
	{"model call kept", ModelCalled{Role: "summarizer", Request: "abc", Answer: "#1 user: hi"},
		map[string]any{"role": "summarizer", "promptTokens": 0, "completionTokens": 0, "durationMs": int64(0), "request": "abc", "answer": "#1 user: hi"}},
	{"task reused", TaskReused{From: 9}, map[string]any{"from": int64(9)}},
	{"interrupt", Interrupt{When: "before", Node: "reply"}, struct {
		When      string `json:"when"`
		Node      string `json:"node"`
		Operation string `json:"operation,omitempty"`
		Question  string `json:"question,omitempty"`
	}{When: "before", Node: "reply"}},
	{"approval gate", Interrupt{When: "approval", Node: "act", Operation: "op-1", Question: "send?"}, struct {
		When      string `json:"when"`
		Node      string `json:"node"`
		Operation string `json:"operation,omitempty"`
		Question  string `json:"question,omitempty"`
	}{"approval", "act", "op-1", "send?"}},
	{"checkpoint saved", CheckpointSaved{ID: 5, Parent: 4, Step: 3, Source: "loop", Pending: 1, Nodes: []string{"critic"}, Next: "reply"},
		map[string]any{"id": int64(5), "parent": int64(4), "step": 3, "source": "loop", "pending": 1, "nodes": []string{"critic"}, "next": "reply"}},
	{"blocked", Blocked{Operation: "op-1", Reason: "expired"}, struct {
		Operation string `json:"operation"`
		Reason    string `json:"reason"`
	}{"op-1", "expired"}},
	{"blocked with a fix", Blocked{Operation: "op-1", Reason: "expired", Fixes: []string{"fresh-grant"}}, map[string]any{"operation": "op-1", "reason": "expired", "fixes": []string{"fresh-grant"}}},
	{"token budget", TokenBudget{Used: 900, Budget: 800, Pending: "reply"}, map[string]any{"used": 900, "budget": 800, "pending": "reply"}},
	{"node failed the run", RunFailed{Reason: "verification failed"}, map[string]any{"reason": "verification failed"}},
	{"node failed the run, with fixes", RunFailed{Reason: "verification failed", Fixes: []string{"show", "new-turn"}}, map[string]any{"reason": "verification failed", "fixes": []string{"show", "new-turn"}}},
	{"run failed", RunFailed{Reason: "boom", Discarded: new("reply"), Task: "t-9"}, map[string]any{"reason": "boom", "discarded": "reply", "task": "t-9"}},
	{"run failed with nothing due", RunFailed{Reason: "boom", Discarded: new("")}, map[string]any{"reason": "boom", "discarded": ""}},
	{"cancelled", RunCancelled{Reason: "by hand", Discarded: "executor ×2"}, map[string]any{"reason": "by hand", "discarded": "executor ×2"}},
	{"recheck rewrote", Rechecked{Reason: "sources changed", Next: new("executor")}, map[string]any{"reason": "sources changed", "next": "executor"}},
	{"recheck rewrote, nothing due", Rechecked{Reason: "sources changed", Next: new("")}, map[string]any{"reason": "sources changed", "next": ""}},
	{"recheck reruns", Rechecked{Reason: "stale", Rerun: map[string]string{"t-1": "stale"}}, map[string]any{"reason": "stale", "rerun": map[string]string{"t-1": "stale"}}},
	{"recheck reruns nothing", Rechecked{Reason: "stale"}, map[string]any{"reason": "stale", "rerun": map[string]string(nil)}},
	{"measured", ContextMeasured{Messages: 21, Tokens: 900, MessageTokens: 800, SummaryChars: 100, MaxMessages: 20, MaxTokens: 6000, Window: 8000, Trigger: "messages"},
		map[string]any{"messages": 21, "tokens": 900, "messageTokens": 800, "summaryChars": 100, "maxMessages": 20, "maxTokens": 6000, "window": 8000, "trigger": "messages"}},
	{"compacted", ContextCompacted{HistoryVersionBefore: 1, HistoryVersionAfter: 2, Trigger: "messages", Strategy: "indexed-fold@v2",
		SourceIndices: []int{1, 2, 3, 4, 5}, BeforeMessages: 21, AfterMessages: 6, BeforeTokens: 900, AfterTokens: 300,
		SummaryCharsBefore: 10, SummaryChars: 200, SummaryBudget: 2400, SummaryLines: 5, Pinned: 1, Phases: 2, Folded: 3, Retired: 0,
		FallbackLines: 0, FactLines: 2, SummaryID: "summary:t:v2", Attempts: 1, Model: new("mock")},
		map[string]any{"historyVersionBefore": 1, "historyVersionAfter": 2, "trigger": "messages", "strategy": "indexed-fold@v2",
			"sourceIndices": []int{1, 2, 3, 4, 5}, "beforeMessages": 21, "afterMessages": 6, "beforeTokens": 900, "afterTokens": 300,
			"summaryCharsBefore": 10, "summaryChars": 200, "summaryBudget": 2400, "summaryLines": 5, "pinned": 1, "phases": 2, "folded": 3, "retired": 0,
			"fallbackLines": 0, "factLines": 2, "summaryId": "summary:t:v2", "attempts": 1, "retriedFor": []string(nil), "model": "mock"}},
	{"compacted by rewind", ContextCompacted{Strategy: "extractive@v1", RetriedFor: []string{"no line for #2"}, Model: new("rewind"), AfterRefusals: 2},
		map[string]any{"historyVersionBefore": 0, "historyVersionAfter": 0, "trigger": "", "strategy": "extractive@v1",
			"sourceIndices": []int(nil), "beforeMessages": 0, "afterMessages": 0, "beforeTokens": 0, "afterTokens": 0,
			"summaryCharsBefore": 0, "summaryChars": 0, "summaryBudget": 0, "summaryLines": 0, "pinned": 0, "phases": 0, "folded": 0, "retired": 0,
			"fallbackLines": 0, "factLines": 0, "summaryId": "", "attempts": 0, "retriedFor": []string{"no line for #2"}, "model": "rewind", "afterRefusals": 2}},
	{"compaction skipped", CompactionSkipped{Trigger: "window", Error: "timeout", HistoryVersion: 1, RefusalsInARow: 1},
		map[string]any{"trigger": "window", "error": "timeout", "historyVersion": 1, "refusalsInARow": 1}},
	{"summary refused", CompactionRejected{Trigger: "messages", Failures: []string{"no line for #2"}, Attempts: 2, HistoryVersion: 1, RefusalsInARow: 1},
		map[string]any{"trigger": "messages", "failures": []string{"no line for #2"}, "attempts": 2, "historyVersion": 1, "refusalsInARow": 1}},
	{"summary refused after a retry", CompactionRejected{Trigger: "messages", Failures: []string{"x"}, Attempts: 2, RefusalsInARow: 1, RetriedFor: []string{"y"}},
		map[string]any{"trigger": "messages", "failures": []string{"x"}, "attempts": 2, "historyVersion": 0, "refusalsInARow": 1, "retriedFor": []string{"y"}}},
	{"rewind's own summary refused", CompactionRejected{Trigger: "messages", Failures: []string{"x"}, Strategy: "extractive@v1"},
		map[string]any{"trigger": "messages", "failures": []string{"x"}, "attempts": 0, "historyVersion": 0, "strategy": "extractive@v1"}},
	{"verified", DraftVerified{"op-1": {Operation: "op-1", OK: false, Checks: []string{"stored"}, Problems: []string{"stale"}}},
		map[string]struct {
			Operation string   `json:"operation"`
			OK        bool     `json:"ok"`
			Checks    []string `json:"checks"`
			Problems  []string `json:"problems,omitempty"`
		}{"op-1": {"op-1", false, []string{"stored"}, []string{"stale"}}}},
	{"tool error", ToolError{Tool: new("lookup"), Error: "bad args", Round: 2}, map[string]any{"tool": "lookup", "error": "bad args", "round": 2}},
	{"tool error, no name", ToolError{Tool: new(""), Error: "bad args", Round: 2}, map[string]any{"tool": "", "error": "bad args", "round": 2}},
	{"empty answer", ToolError{Error: "the model answered with nothing", Round: 1}, map[string]any{"error": "the model answered with nothing", "round": 1}},
	{"tool refused", ToolRefused{Tool: "lookup", Why: "budget", Round: 3}, map[string]any{"tool": "lookup", "why": "budget", "round": 3}},
	{"tool called", ToolCalled{Tool: "lookup", Round: 1, Source: "order:7", DurationMs: 2},
		map[string]any{"tool": "lookup", "round": 1, "source": "order:7", "durationMs": 2}},
	{"tool loop", ToolLoop{Rounds: 4, Calls: 5, Refused: 1}, map[string]any{"rounds": 4, "calls": 5, "refused": 1}},
	{"grant", GrantAttached{Operation: "op-1", Ref: "g-1", ExpiresAt: "2026-12-05T10:00:00Z", By: "ana"},
		map[string]any{"operation": "op-1", "ref": "g-1", "expiresAt": "2026-12-05T10:00:00Z", "by": "ana"}},
	{"side effect", SideEffectRecorded{Operation: "op-1", Reused: true, PayloadSha256: "ff"}, map[string]any{"operation": "op-1", "reused": true, "payloadSha256": "ff"}},
	{"planner retried", PlannerRetried{Error: "not json", Answer: "hm"}, map[string]any{"error": "not json", "answer": "hm"}},
	{"planner degraded", PlannerDegraded{Error: "not json", Answer: "hm", Subtasks: 1, What: "one subtask"},
		map[string]any{"error": "not json", "answer": "hm", "subtasks": 1, "what": "one subtask"}},
	{"critic degraded", CriticDegraded{Error: "not json", Answer: "hm", Unreviewed: []string{"t-1"}},
		map[string]any{"error": "not json", "answer": "hm", "unreviewed": []string{"t-1"}}},
}

func TestPayloadsStoreWhatTheMapsStored(t *testing.T) {
	for _, f := range forms {
		got, err := json.Marshal(f.p)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		want, err := json.Marshal(f.old)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s (%s) stores\n%s\nwhere its emit site stored\n%s", f.name, f.p.Type(), got, want)
		}
	}
}

// Every event type has a form above, and each reads back as the payload
// it was written from, to the byte.
func TestEveryTypeRoundTrips(t *testing.T) {
	covered := map[string]bool{}
	for _, f := range forms {
		covered[f.p.Type()] = true
		data, err := json.Marshal(f.p)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeAny(f.p.Type(), data)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		got := reflect.ValueOf(back).Elem().Interface()
		if !reflect.DeepEqual(got, f.p) {
			t.Errorf("%s reads back as %#v, not %#v", f.name, got, f.p)
		}
		again, _ := json.Marshal(back)
		if !bytes.Equal(again, data) {
			t.Errorf("%s: %s written again is %s", f.name, data, again)
		}
	}
	for _, typ := range Types() {
		if !covered[typ] {
			t.Errorf("event type %s has no form in this test", typ)
		}
	}
	if len(covered) != len(Types()) {
		t.Errorf("the forms cover %d types, Types lists %d", len(covered), len(Types()))
	}
}

func TestDecodeSaysWhatIsWrong(t *testing.T) {
	if _, err := Decode[CheckpointSaved](TypeCheckpointSaved, []byte(`{"step":"three"}`)); err == nil || !strings.Contains(err.Error(), "checkpoint.saved event's data does not decode") {
		t.Errorf("a bad payload: %v", err)
	}
	if _, err := Decode[CheckpointSaved](TypeNodeStarted, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "node.started event read as checkpoint.saved") {
		t.Errorf("another type's payload: %v", err)
	}
	if _, err := Decode[Blocked](TypeBlocked, nil); err == nil || !strings.Contains(err.Error(), "no data") {
		t.Errorf("no payload: %v", err)
	}
	if _, err := DecodeAny("graph.own", []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "does not know") {
		t.Errorf("an unknown type: %v", err)
	}
	d, err := Decode[Rechecked](TypeRechecked, []byte(`{"reason":"r","next":"reply"}`))
	if err != nil || d.Next == nil || *d.Next != "reply" || d.Reason != "r" {
		t.Errorf("a stored recheck reads as %+v, %v", d, err)
	}
}
