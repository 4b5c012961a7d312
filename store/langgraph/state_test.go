package langgraph_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// msg is a LangChain message as Python stores it.
func msg(class, id, content string) lgtest.Ext {
	module := map[string]string{"HumanMessage": "human", "AIMessage": "ai", "RemoveMessage": "modifier"}[class]
	return lgtest.Ext{Code: 5, Payload: []any{"langchain_core.messages." + module, class,
		map[string]any{"content": content, "id": id, "type": module}, "model_validate_json"}}
}

// contents lists a messages channel's ids and texts.
func contents(t *testing.T, v any) []string {
	t.Helper()
	msgs, ok := langgraph.Messages(v)
	if !ok {
		t.Fatalf("%v is not a list of messages", v)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, m.ID+":"+m.Content)
	}
	return out
}

// Command(update=…) given to an interrupted thread is stored as the null
// task's writes; LangGraph's get_state and get_state_history apply them
// (messages by id, a list reducer appending, other channels replaced), at
// the checkpoint that holds them even when it is not the newest, and the
// stored values stay one key away. A task's writes at an older checkpoint
// are not applied (LangGraph applies those only to the current state).
func TestCommandUpdateApplied(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "update.db")
	w := lgtest.OpenWriter(t, path)
	w.Checkpoint("u", "", lgtest.ID(1), "", "input", -1, map[string]any{}, "")
	w.Checkpoint("u", "", lgtest.ID(2), lgtest.ID(1), "loop", 0, map[string]any{
		"messages": []any{msg("HumanMessage", "h-1", "hello"), msg("AIMessage", "ai-1", "draft"), msg("HumanMessage", "h-0", "drop me")},
		"findings": []any{"a"}, "topic": "old",
	}, "review")
	w.Write("u", "", lgtest.ID(2), langgraph.NullTask, 0, "topic", "new")
	w.Write("u", "", lgtest.ID(2), langgraph.NullTask, 1, "messages", []any{msg("AIMessage", "ai-1", "edited"), msg("RemoveMessage", "h-0", ""), msg("HumanMessage", "h-2", "and more")})
	w.Write("u", "", lgtest.ID(2), langgraph.NullTask, 2, "findings", []any{"b"})
	w.Write("u", "", lgtest.ID(2), langgraph.NullTask, -4, "__resume__", "yes")
	w.Write("u", "", lgtest.ID(2), "some-task", 0, "topic", "a task's, not applied here")
	w.Checkpoint("u", "", lgtest.ID(3), lgtest.ID(2), "loop", 1, map[string]any{"topic": "new"}, "")
	src := open(t, "sqlite:"+path)
	c := langgraph.Chain{Thread: "u"}
	cp, err := src.Checkpoint(context.Background(), c, lgtest.ID(2))
	if err != nil {
		t.Fatal(err)
	}
	topic, _ := cp.Value("topic")
	findings, _ := cp.Value("findings")
	messages, _ := cp.Value("messages")
	if topic != "new" || fmt.Sprint(findings) != "[a b]" {
		t.Errorf("topic %v, findings %v: want the update's new, and [a b]", topic, findings)
	}
	if got, want := contents(t, messages), []string{"h-1:hello", "ai-1:edited", "h-2:and more"}; !slices.Equal(got, want) {
		t.Errorf("messages %q, want %q (ai-1 replaced by id, h-0 removed, h-2 added)", got, want)
	}
	if len(cp.Next) != 1 || cp.Next[0].Node != "review" {
		t.Errorf("next %+v, want review still due", cp.Next)
	}
	if cp.Stored == nil || cp.Stored.Next != nil {
		t.Fatalf("stored %+v, want the stored channels and no stored next", cp.Stored)
	}
	var names []string
	for _, ch := range cp.Stored.Channels {
		names = append(names, ch.Name)
		if ch.Name == "topic" && (ch.Value != "old" || !ch.Held) {
			t.Errorf("stored topic %+v, want old", ch)
		}
		if ch.Name == "messages" && len(contents(t, ch.Value)) != 3 {
			t.Errorf("stored messages %v, want the 3 stored", ch.Value)
		}
	}
	if !slices.Equal(names, []string{"findings", "messages", "topic"}) {
		t.Errorf("stored channels %q, want findings, messages, topic", names)
	}
	ws, err := src.Writes(context.Background(), c, lgtest.ID(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || !ws[0].Command || len(ws[0].Writes) != 4 {
		t.Errorf("writes %+v, want the command's 4 writes as stored, then the task's", ws)
	}
	newest, err := src.Checkpoint(context.Background(), c, "")
	if err != nil {
		t.Fatal(err)
	}
	if newest.Stored != nil {
		t.Errorf("the newest checkpoint, with no writes, shows %+v applied", newest.Stored)
	}
}

// A value no channel can take (it does not decode) is not applied; the
// checkpoint says so and the stored value stays.
func TestUndecodableUpdateNamed(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bad.db")
	w := lgtest.OpenWriter(t, path)
	w.Checkpoint("u", "", lgtest.ID(1), "", "loop", 0, map[string]any{"topic": "old"}, "review")
	if _, err := w.DB.Exec(`INSERT INTO writes VALUES ('u', '', ?, ?, 0, 'topic', 'pickle', X'80044b012e')`, lgtest.ID(1), langgraph.NullTask); err != nil {
		t.Fatal(err)
	}
	cp, err := open(t, "sqlite:"+path).Checkpoint(context.Background(), langgraph.Chain{Thread: "u"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if topic, _ := cp.Value("topic"); topic != "old" {
		t.Errorf("topic %v, want the stored old", topic)
	}
	if want := `a pending write of task "00000000-0000-0000-0000-000000000000" to channel "topic" is not applied`; !strings.Contains(cp.Damaged, want) {
		t.Errorf("damaged %q, want it to say %q", cp.Damaged, want)
	}
}
