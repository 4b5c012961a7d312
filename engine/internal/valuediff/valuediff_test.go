package valuediff

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDiffMatchesItemsByIndexAndID(t *testing.T) {
	t.Parallel()
	parent := map[string]json.RawMessage{
		"messages":        json.RawMessage(`[{"index":1,"content":"a"},{"index":2,"content":"b"}]`),
		"budgetRemaining": json.RawMessage(`5`),
		"subtasks":        json.RawMessage(`[{"id":"t-1","status":"pending"}]`),
		"attachments":     json.RawMessage(`[]`),
	}
	appended := map[string]json.RawMessage{
		"messages":        json.RawMessage(`[{"index":1,"content":"a"},{"index":2,"content":"b"},{"index":3,"content":"c"},{"index":4,"content":"d"},{"index":5,"content":"e"}]`),
		"budgetRemaining": json.RawMessage(`4`),
		"subtasks":        json.RawMessage(`[{"id":"t-1","status":"done"}]`),
		"attachments":     json.RawMessage(` [] `),
	}
	got := map[string]Channel{}
	for _, d := range Channels(parent, appended) {
		got[d.Channel] = d
	}
	if len(got) != 3 {
		t.Fatalf("want 3 changed channels, got %v", got)
	}
	if s := got["messages"].Summary; s != "+3 (#3–#5)" {
		t.Errorf("messages: %q", s)
	}
	if s := got["budgetRemaining"].Summary; s != "5 → 4" {
		t.Errorf("budget: %q", s)
	}
	if d := got["subtasks"]; d.Summary != "~1 (t-1)" || len(d.Lines) != 2 || !strings.HasPrefix(d.Lines[0], "- ") || !strings.HasPrefix(d.Lines[1], "+ ") {
		t.Errorf("subtasks: %+v", d)
	}
	replaced := map[string]json.RawMessage{"messages": json.RawMessage(`[{"index":2,"content":"b"}]`)}
	d := Channels(map[string]json.RawMessage{"messages": parent["messages"]}, replaced)
	if len(d) != 1 || !strings.HasPrefix(d[0].Summary, "replaced wholesale 2 → 1 items") {
		t.Errorf("replace: %+v", d)
	}
}
