package chainformat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// A node that fans out often writes the same items it sends: the ticket
// planner replaces the subtasks and sends each one to an executor. The
// Sends are stored whole (as plain JSON, with their arguments), so in a
// delta (format 3) a keyed channel's replace whose items are a field of a
// pending task's arguments stores those items as [task index, field]:
//
//	{"$ra": [[0, "task"], [1, "task"], {an item no task carries}]}
//
// Items are objects, so an array is always a reference.

// isReplaceRefs tells a stored replace with references, as written or as
// PostgreSQL's jsonb gives it back.
func isReplaceRefs(stored json.RawMessage) bool {
	_, ok := topField(stored, "$ra")
	return ok
}

// objectFields splits a JSON object into its members, in order.
func objectFields(raw []byte) ([][2]json.RawMessage, error) {
	if fs, ok := objectMembers(raw); ok {
		return fs, nil
	}
	return objectFieldsSlow(raw)
}

func objectFieldsSlow(raw []byte) ([][2]json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out [][2]json.RawMessage
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		k, _ := json.Marshal(t)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, [2]json.RawMessage{k, v})
	}
	return out, nil
}

// argField is field (a JSON string) of task i's arguments.
func argField(tasks []Task, i int, field json.RawMessage) (json.RawMessage, bool) {
	if i < 0 || i >= len(tasks) || len(tasks[i].Args) == 0 {
		return nil, false
	}
	fs, err := objectFields(tasks[i].Args)
	if err != nil {
		return nil, false
	}
	for _, f := range fs {
		if bytes.Equal(f[0], field) {
			return f[1], true
		}
	}
	return nil, false
}

// refReplace is a stored replace write with the items tasks carry as
// references, or nil when none does.
func refReplace(write json.RawMessage, tasks []Task) json.RawMessage {
	list, ok := isReplace(write)
	if !ok || len(tasks) == 0 {
		return nil
	}
	items, err := splitList(list)
	if err != nil || len(items) == 0 {
		return nil
	}
	type carried struct {
		task  int
		field json.RawMessage
	}
	byBytes := map[string]carried{}
	for i, t := range tasks {
		if len(t.Args) == 0 {
			continue
		}
		fs, err := objectFields(t.Args)
		if err != nil {
			continue
		}
		for _, f := range fs {
			if _, seen := byBytes[string(f[1])]; !seen && len(f[1]) > 0 && f[1][0] == '{' {
				byBytes[string(f[1])] = carried{i, f[0]}
			}
		}
	}
	out := make([]json.RawMessage, len(items))
	found := false
	for j, it := range items {
		out[j] = it
		if c, ok := byBytes[string(it)]; ok {
			out[j], _ = json.Marshal([]any{c.task, c.field})
			found = true
		}
	}
	if !found {
		return nil
	}
	enc, err := json.Marshal(map[string][]json.RawMessage{"$ra": out})
	if err != nil || len(enc) >= len(write) {
		return nil
	}
	return enc
}

// readReplaceRefs reads {"$ra": [item, …]}, a stored replace, as
// encoding/json's Unmarshal does into expandReplace's struct, without its
// reflection; not ok for any other form (ask encoding/json).
func readReplaceRefs(stored []byte) ([]json.RawMessage, bool) {
	list, ok := onlyMember(stored, "$ra")
	if !ok {
		return nil, false
	}
	r := rd{b: list}
	if !r.eat('[') {
		return nil, false
	}
	items := []json.RawMessage{}
	if r.eat(']') {
		return items, true
	}
	for {
		v, ok := r.value()
		if !ok {
			return nil, false
		}
		items = append(items, v)
		if r.eat(',') {
			continue
		}
		return items, r.eat(']') && r.end()
	}
}

// readSendRef reads [task, field], a replace's reference to a field of
// a pending Send, as expandReplace's encoding/json path does (exactly two
// members, the task a whole number); not ok for any other form.
func readSendRef(it []byte) (task int, field json.RawMessage, ok bool) {
	r := rd{b: it}
	if !r.eat('[') {
		return 0, nil, false
	}
	n, ok := r.int()
	if !ok || n != int64(int(n)) || !r.eat(',') {
		return 0, nil, false
	}
	if field, ok = r.value(); !ok || !r.eat(']') || !r.end() {
		return 0, nil, false
	}
	return int(n), field, true
}

// expandReplace reads back a replace refReplace stored, given the tasks
// of its row.
func expandReplace(stored json.RawMessage, tasks []Task) (json.RawMessage, error) {
	var r struct {
		Items []json.RawMessage `json:"$ra"`
	}
	var ok bool
	if r.Items, ok = readReplaceRefs(stored); !ok {
		if err := json.Unmarshal(stored, &r); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"replace":[`)
	for j, it := range r.Items {
		if j > 0 {
			b.WriteByte(',')
		}
		if len(it) == 0 || it[0] != '[' {
			b.Write(it)
			continue
		}
		i, field, ok := readSendRef(it)
		if !ok {
			var ref [2]json.RawMessage
			if err := json.Unmarshal(it, &ref); err != nil || json.Unmarshal(ref[0], &i) != nil {
				return nil, fmt.Errorf("a stored replace refers to %s, not [task, field]", it)
			}
			field = ref[1]
		}
		v, ok := argField(tasks, i, field)
		if !ok {
			return nil, fmt.Errorf("a stored replace refers to field %s of task #%d, which its checkpoint does not send", field, i)
		}
		b.Write(v)
	}
	b.WriteString(`]}`)
	return b.Bytes(), nil
}
