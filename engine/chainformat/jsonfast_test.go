package chainformat

import (
	"encoding/json"
	"reflect"
	"testing"
)

// hostileObjects are objects as rewind writes them and as it never does:
// white space, other cases, repeated keys, escapes, nulls, bad JSON.
var hostileObjects = []string{
	`{"set":5}`, `{ "set" : 5 }`, `{"set":null}`, `{"set":-1.5e3}`, `{"SET":5}`, `{"Set":1,"set":2}`,
	`{"set":1,"set":2}`, `{"set":5,"x":1}`, `{}`, `{"set":"a\u0041"}`, `{"set":[1, 2]}`, `{"set":}`,
	`{"set":5`, `{"s\u0065t":5}`, `{"set":{"a":[true,false,null]}}`, "{\"set\":5}\n", `{"set":5}x`,
	`{"$reset":{"a":1}}`, `{"$reset":null}`, `{"$RESET":{}}`, `{"$reset":1,"other":2}`, `{"$reset" : { } }`,
	`{"$ra":[1,[0,"text"],{"a":"<&>"}]}`, `{"$ra":[]}`, `{"$ra":null}`, `{"$ra":[1,]}`, `{"$RA":[1]}`,
	`{"$ra":[ [ 0 , "f" ] ]}`, `{"$ra":[1],"$ra":[2]}`, `{"$ra":[1] }`, `{"$ra":"x"}`, `[]`, `null`, ``,
}

// onlyMember gives what encoding/json gives a struct of that one field,
// or leaves it to encoding/json: a Counter's set, a turn map's reset.
func TestOnlyMemberAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range hostileObjects {
		for _, key := range []string{"set", "$reset", "$ra"} {
			v, ok := onlyMember([]byte(in), key)
			if !ok {
				continue
			}
			var ref map[string]json.RawMessage
			if err := json.Unmarshal([]byte(in), &ref); err != nil || len(ref) != 1 || string(ref[key]) != string(v) {
				t.Errorf("onlyMember(%q, %q) = %s; encoding/json reads %v (%v)", in, key, v, ref, err)
			}
		}
	}
}

// A stored replace and its references read as encoding/json reads them.
func TestReplaceRefsAgreeWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range hostileObjects {
		items, ok := readReplaceRefs([]byte(in))
		if !ok {
			continue
		}
		var ref struct {
			Items []json.RawMessage `json:"$ra"`
		}
		if err := json.Unmarshal([]byte(in), &ref); err != nil || !reflect.DeepEqual(items, ref.Items) {
			t.Errorf("readReplaceRefs(%q) = %q; encoding/json reads %q (%v)", in, items, ref.Items, err)
		}
	}
	for _, in := range []string{`[0,"text"]`, `[ 3 , "f" ]`, `[1.5,"f"]`, `[1e2,"f"]`, `[-2,{"a":1}]`, `[0]`, `[0,"a","b"]`,
		`[0,"a"]x`, `["0","a"]`, `[99999999999999999999,"a"]`, `[0,]`, `[]`, `{}`} {
		i, field, ok := readSendRef([]byte(in))
		if !ok {
			continue
		}
		var ref [2]json.RawMessage
		var want int
		if err := json.Unmarshal([]byte(in), &ref); err != nil || json.Unmarshal(ref[0], &want) != nil || i != want || string(field) != string(ref[1]) {
			t.Errorf("readSendRef(%q) = %d, %s; encoding/json reads %d, %s", in, i, field, want, ref[1])
		}
	}
}

// A row's tasks, read without reflection, are encoding/json's.
func TestReadTasksAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`[]`, `[{"node":"executor"}]`, `[{"id":"t1","node":"a","args":{"x":[1,2]}}]`,
		`[{"node":"a","args":null}]`, `[{"Node":"a"}]`, `[{"node":"a","extra":1}]`, `[{"node":"a"},]`, `[{"node":"a"}] `,
		`[{"node":"a\u0041"}]`, `null`, `{}`} {
		ts, ok := readTasks([]byte(in))
		if !ok {
			continue
		}
		var ref storedTasks
		if err := json.Unmarshal([]byte(in), &ref); err != nil || !reflect.DeepEqual(ts, ref) {
			t.Errorf("readTasks(%q) = %+v; encoding/json reads %+v (%v)", in, ts, ref, err)
		}
	}
}

// A model.called event's data is json.Marshal's bytes of its map: show
// --calls and the events' hashes read them.
func TestCalledEventDataIsMarshals(t *testing.T) {
	t.Parallel()
	for _, c := range []storedCall{
		{Role: "planner", Prompt: 10, Completion: 20, Ms: 30},
		{Role: "critic", Prompt: -1, Completion: 0, Ms: 1 << 40, Err: "boom <x> & \u2028", Mode: "schema", Req: "ab12", Answer: "bad\xffbyte \"quoted\" \x01"},
		{Role: "", Answer: "été 🙂", Req: "r"},
	} {
		data := map[string]any{"role": c.Role, "promptTokens": c.Prompt, "completionTokens": c.Completion, "durationMs": c.Ms}
		for k, v := range map[string]string{"error": c.Err, "jsonMode": c.Mode, "request": c.Req, "answer": c.Answer} {
			if v != "" {
				data[k] = v
			}
		}
		want, _ := json.Marshal(data)
		if got := c.data(); string(got) != string(want) {
			t.Errorf("%+v: data\n%s, json.Marshal writes\n%s", c, got, want)
		}
	}
}

// A keyed channel's items are written as json.Marshal writes them: the
// stored and shown value of every attachment list.
func TestMarshalItemsIsMarshals(t *testing.T) {
	t.Parallel()
	docs := []string{`{}`, `{"id":"a1","n":1.50,"neg":-0,"e":1e5,"t":true,"f":false,"z":null}`,
		`{"b":"<&> \u2028 é 🙂 \"q\" \\ \n","a":[1,"x",{"k":[]}],"A":{"y":{"x":null}}}`, `{"é":1,"<k>":2,"":3}`}
	var items []map[string]any
	for _, d := range docs {
		v, ok := readAny([]byte(d))
		if !ok {
			t.Fatalf("readAny(%s) not ok", d)
		}
		items = append(items, v.(map[string]any))
	}
	for _, in := range [][]map[string]any{nil, {}, items, {nil}, {{"f": 1.5, "i": 2}}, {{"n": json.Number("")}}, {{"n": json.Number("1x")}}} {
		got, gotErr := marshalItems(in)
		want, wantErr := json.Marshal(in)
		if string(got) != string(want) || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("marshalItems(%v) = %s (%v); json.Marshal writes %s (%v)", in, got, gotErr, want, wantErr)
		}
	}
}
