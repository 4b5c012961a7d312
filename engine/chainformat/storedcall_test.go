package chainformat

import (
	"encoding/json"
	"testing"
)

// A stored model call keeps its old shapes: five elements, or six with an
// error; a JSON mode is a seventh, after an error slot that may be empty.
func TestStoredCallShapes(t *testing.T) {
	for _, c := range []struct {
		disk string
		call storedCall
	}{
		{`["executor",10,20,30,40]`, storedCall{Role: "executor", Prompt: 10, Completion: 20, Ms: 30, At: 40}},
		{`["planner",1,2,3,4,"boom"]`, storedCall{Role: "planner", Prompt: 1, Completion: 2, Ms: 3, At: 4, Err: "boom"}},
		{`["planner",1,2,3,4,"","object"]`, storedCall{Role: "planner", Prompt: 1, Completion: 2, Ms: 3, At: 4, Mode: "object"}},
		{`["critic",1,2,3,4,"late","schema"]`, storedCall{Role: "critic", Prompt: 1, Completion: 2, Ms: 3, At: 4, Err: "late", Mode: "schema"}},
	} {
		var got storedCall
		if err := json.Unmarshal([]byte(c.disk), &got); err != nil || got != c.call {
			t.Errorf("%s read as %+v (%v), want %+v", c.disk, got, err, c.call)
		}
		b, err := json.Marshal(c.call)
		if err != nil || string(b) != c.disk {
			t.Errorf("%+v written as %s (%v), want %s", c.call, b, err, c.disk)
		}
	}
	// What a reader of six elements did with a seventh: nothing.
	var old struct{ v []json.RawMessage }
	if err := json.Unmarshal([]byte(`["planner",1,2,3,4,"","object"]`), &old.v); err != nil || string(old.v[5]) != `""` {
		t.Errorf("the error slot of a call with a mode: %s %v", old.v[5], err)
	}
	for _, bad := range []string{`["planner",1,2,3]`, `{"role":"planner"}`, `["planner","x",2,3,4]`, `["planner",1,2,3,4,"",7]`} {
		if err := json.Unmarshal([]byte(bad), new(storedCall)); err == nil {
			t.Errorf("%s was read", bad)
		}
	}
}
