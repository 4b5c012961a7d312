package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"rewind/store"
	"rewind/store/internal/check"
)

// Helpers the clauses share.

// checkpoint is a small, deterministic checkpoint whose state names its thread and id.
func checkpoint(thread string, id, parent int64) store.Checkpoint {
	state := fmt.Appendf(nil, `{"v":2,"thread":%s,"step":%d,"messages":[{"index":0,"role":"user","text":"hello %d"}]}`, jsonString(thread), id, id)
	return store.Checkpoint{ThreadID: thread, ID: id, ParentID: parent, State: state, Base: true}
}

func event(typ, payload string) store.Event {
	return store.Event{Type: typ, Payload: []byte(payload)}
}

func writes(thread string, cp int64, task string) store.TaskWrites {
	return store.TaskWrites{ThreadID: thread, CheckpointID: cp, TaskID: task,
		Writes: fmt.Appendf(nil, `{"task":%s,"writes":[{"channel":"messages","value":{"text":"from %d"}}]}`, jsonString(task), cp)}
}

func put(t *testing.T, s store.Store, cp store.Checkpoint, events ...store.Event) store.Checkpoint {
	t.Helper()
	if err := s.PutCheckpoint(t.Context(), cp, events); err != nil {
		t.Fatalf("PutCheckpoint(%s, %d, parent %d): %v", clip(cp.ThreadID), cp.ID, cp.ParentID, err)
	}
	return cp
}

func putWrites(t *testing.T, s store.Store, w store.TaskWrites) {
	t.Helper()
	if err := s.PutWrites(t.Context(), w); err != nil {
		t.Fatalf("PutWrites(%s, %d, %q): %v", clip(w.ThreadID), w.CheckpointID, w.TaskID, err)
	}
}

func wantIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("error = %v, want %v", err, target)
	}
}

func wantCheckpoint(t *testing.T, got, want store.Checkpoint) {
	t.Helper()
	if got.ThreadID != want.ThreadID || got.ID != want.ID || got.ParentID != want.ParentID || got.RerootedFrom != want.RerootedFrom {
		t.Errorf("got checkpoint %s/%d (parent %d, rerooted from %d), want %s/%d (parent %d, rerooted from %d)",
			clip(got.ThreadID), got.ID, got.ParentID, got.RerootedFrom, clip(want.ThreadID), want.ID, want.ParentID, want.RerootedFrom)
	}
	if !sameJSON(got.State, want.State) {
		t.Errorf("checkpoint %d state = %s, want %s", want.ID, clip(string(got.State)), clip(string(want.State)))
	}
	if got.CreatedAt.IsZero() {
		t.Errorf("checkpoint %d has no CreatedAt", want.ID)
	}
}

// wantEvents compares type, checkpoint, seq and payload; a zero CheckpointID
// or Seq in want means "the one asked for" and "its position".
func wantEvents(t *testing.T, s store.Store, thread string, cp int64, want []store.Event) {
	t.Helper()
	got, err := s.Events(t.Context(), thread, cp)
	if err != nil {
		t.Fatalf("Events(%s, %d): %v", clip(thread), cp, err)
	}
	if len(got) != len(want) {
		t.Fatalf("Events(%s, %d) has %d events, want %d", clip(thread), cp, len(got), len(want))
	}
	for i, w := range want {
		if w.CheckpointID == 0 {
			w.CheckpointID = cp
		}
		if w.Seq == 0 {
			w.Seq = i + 1
		}
		if len(w.Payload) == 0 {
			w.Payload = []byte(`{}`)
		}
		g := got[i]
		if g.CheckpointID != w.CheckpointID || g.Seq != w.Seq || g.Type != w.Type || !sameJSON(g.Payload, w.Payload) {
			t.Errorf("Events(%s, %d)[%d] = %d/%d %q %s, want %d/%d %q %s", clip(thread), cp, i,
				g.CheckpointID, g.Seq, g.Type, clip(string(g.Payload)), w.CheckpointID, w.Seq, w.Type, clip(string(w.Payload)))
		}
	}
}

func wantTasks(t *testing.T, s store.Store, thread string, cp int64, tasks ...string) {
	t.Helper()
	got, err := s.Writes(t.Context(), thread, cp)
	if err != nil {
		t.Fatalf("Writes(%s, %d): %v", clip(thread), cp, err)
	}
	var ids []string
	for _, w := range got {
		ids = append(ids, w.TaskID)
	}
	if !slices.Equal(ids, tasks) {
		t.Errorf("Writes(%s, %d) tasks = %q, want %q", clip(thread), cp, ids, tasks)
	}
}

func ids(from, to int64) []int64 {
	var out []int64
	for id := from; id >= to; id-- {
		out = append(out, id)
	}
	return out
}

func idsOf(cps []store.Checkpoint) []int64 {
	var out []int64
	for _, cp := range cps {
		out = append(out, cp.ID)
	}
	return out
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func nested(depth int) []byte {
	return []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
}

// hugeText is n bytes of varied text, quotes and non-ASCII included.
func hugeText(n int) string {
	const chunk = `Line with "quotes", a \ backslash, tabs	and ünïcödé — 日本語 🙂. `
	return strings.ToValidUTF8(strings.Repeat(chunk, n/len(chunk)+1)[:n], "")
}

// reformat writes the same JSON value differently: indented, keys reversed.
func reformat(t *testing.T, doc []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("reformat: %v", err)
	}
	if m, ok := v.(map[string]any); ok {
		keys := slices.Sorted(maps.Keys(m))
		var b bytes.Buffer
		b.WriteString("{\n")
		for i := len(keys) - 1; i >= 0; i-- {
			val, _ := json.MarshalIndent(m[keys[i]], "  ", "   ")
			fmt.Fprintf(&b, "  %s : %s", jsonString(keys[i]), val)
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("}")
		return b.Bytes()
	}
	out, _ := json.MarshalIndent(v, "", "    ")
	return out
}

// sameJSON is the one definition of "the same JSON value" (tested on its
// own in store/internal/check): stores must agree with it.
func sameJSON(a, b []byte) bool { return check.SameJSON(a, b) }

// clip keeps failure messages readable when ids and payloads are huge.
func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:80], len(s))
}

func clipAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = clip(s)
	}
	return out
}

func delta(thread string, id, parent int64) store.Checkpoint {
	cp := checkpoint(thread, id, parent)
	cp.Base = false
	cp.State = fmt.Appendf(nil, `{"v":2,"delta":%d}`, id)
	return cp
}

func withMeta(cp store.Checkpoint) store.Checkpoint {
	cp.Meta = fmt.Appendf(nil, `{"step":%d,"next":["executor"]}`, cp.ID)
	return cp
}
