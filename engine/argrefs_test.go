package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Arguments that carry an item of a keyed channel are stored as a
// reference to it and read back byte for byte, field order and changed
// fields included; anything else is left as it is.
func TestArgsReferToKeyedItems(t *testing.T) {
	g := &Graph{keyed: map[string]string{"subtasks": "id"}}
	values := Values{"subtasks": json.RawMessage(`[{"goal":"look up the order status (order SO1)","id":"t-1","status":"redo","toolCalls":1,"topic":"order","result":"t-1: at the depot"}]`)}
	items := func() *keyedItems { return &keyedItems{values: values, keyed: g.keyed} }
	cases := []struct {
		name, args string
		stored     bool
	}{
		{"the item in another order, a field left out", `{"task":{"id":"t-1","goal":"look up the order status (order SO1)","topic":"order","toolCalls":1,"status":"redo"},"feedback":"cite the scan"}`, true},
		{"a field that differs", `{"task":{"id":"t-1","goal":"look up the order status (order SO1)","topic":"order","toolCalls":2,"status":"pending"}}`, true},
		{"a field the item has not", `{"task":{"id":"t-1","goal":"look up the order status (order SO1)","topic":"order","new":[1,2]}}`, true},
		{"an item the channel has not", `{"task":{"id":"t-9","goal":"look up the order status (order SO1)","topic":"order"}}`, false},
		{"a dollar anywhere", `{"task":{"id":"t-1","goal":"look up the order status (order SO1)","topic":"$order"}}`, false},
		{"not shorter", `{"task":{"id":"t-1"}}`, false},
		{"not an object", `["t-1"]`, false},
		{"spaces the reference would not keep", `{"task": {"id":"t-1","goal":"look up the order status (order SO1)","topic":"order"}}`, false},
	}
	for _, c := range cases {
		ref := g.refArgs(json.RawMessage(c.args), items())
		if (ref != nil) != c.stored {
			t.Errorf("%s: stored as %s", c.name, ref)
			continue
		}
		if ref == nil {
			continue
		}
		if len(ref) >= len(c.args) || !strings.Contains(string(ref), `"$k":"subtasks"`) {
			t.Errorf("%s: stored as %s", c.name, ref)
		}
		back, err := resolveArgs(ref, items())
		if err != nil || string(back) != c.args {
			t.Errorf("%s: stored as %s, reads back as %s (%v)", c.name, ref, back, err)
		}
	}
	// More fields than "$n" has digits: their names.
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf(`"f%02d":%d`, 39-i, i))
	}
	values["subtasks"] = json.RawMessage(`[{"id":"t-1","goal":"` + strings.Repeat("g", 400) + `"}]`)
	args := `{"task":{"id":"t-1","goal":"` + strings.Repeat("g", 400) + `",` + strings.Join(many, ",") + `}}`
	ref := g.refArgs(json.RawMessage(args), items())
	if back, err := resolveArgs(ref, items()); ref == nil || !strings.Contains(string(ref), `"$f"`) || err != nil || string(back) != args {
		t.Errorf("40 fields: stored as %.200s, read back as %.100s (%v)", ref, back, err)
	}
	// The item gone: an error, not other arguments.
	values["subtasks"] = json.RawMessage(`[]`)
	if back, err := resolveArgs(ref, items()); err == nil {
		t.Errorf("a reference to an item the checkpoint does not hold reads as %s", back)
	}
}
