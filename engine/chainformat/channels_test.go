package chainformat

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestIndexedAppendKeepsOriginalIndices(t *testing.T) {
	r := IndexedAppend("index")
	v, err := r(json.RawMessage(`[]`), json.RawMessage(`[{"c":"a"},{"c":"b"}]`))
	if err != nil {
		t.Fatal(err)
	}
	v, err = r(v, json.RawMessage(`[{"c":"c"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(v); got != `[{"c":"a","index":1},{"c":"b","index":2},{"c":"c","index":3}]` {
		t.Fatalf("append: got %s", got)
	}
	// A replace shrinks the channel; the next append continues after the
	// last kept index, not from 1.
	v, err = r(v, json.RawMessage(`{"replace":[{"c":"c","index":3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	v, err = r(v, json.RawMessage(`[{"c":"d"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(v); got != `[{"c":"c","index":3},{"c":"d","index":4}]` {
		t.Fatalf("after replace: got %s", got)
	}
}

func TestAppendGrowsWithoutReplace(t *testing.T) {
	// The seed's trap: a summarizer returning 6 messages as a plain write
	// appends them (23 → 29) instead of shrinking the history.
	r := IndexedAppend("index")
	var items []string
	for i := 0; i < 23; i++ {
		items = append(items, `{"c":"x"}`)
	}
	v, _ := r(nil, json.RawMessage("["+strings.Join(items, ",")+"]"))
	v, _ = r(v, json.RawMessage("["+strings.Join(items[:6], ",")+"]"))
	if n := (Values{"m": v}).Len("m"); n != 29 {
		t.Fatalf("plain write: %d items, want 29", n)
	}
	v, _ = r(v, json.RawMessage(`{"replace":[`+strings.Join(items[:6], ",")+`]}`))
	if n := (Values{"m": v}).Len("m"); n != 6 {
		t.Fatalf("replace write: %d items, want 6", n)
	}
}

func TestMergeByIDUpsertsInPlace(t *testing.T) {
	r := MergeByID("id")
	v, _ := r(nil, json.RawMessage(`[{"id":"a","s":1},{"id":"b","s":1}]`))
	v, err := r(v, json.RawMessage(`[{"id":"b","s":2},{"id":"c","s":1}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(v); got != `[{"id":"a","s":1},{"id":"b","s":2},{"id":"c","s":1}]` {
		t.Fatalf("got %s", got)
	}
	if _, err := r(v, json.RawMessage(`[{"s":3}]`)); err == nil {
		t.Fatal("an item without id was accepted")
	}
}

func TestCounter(t *testing.T) {
	v, _ := Counter(json.RawMessage(`0`), json.RawMessage(`1`))
	v, _ = Counter(v, json.RawMessage(`1`))
	if string(v) != "2" {
		t.Fatalf("add: %s", v)
	}
	v, _ = Counter(v, json.RawMessage(`{"set":5}`))
	v, _ = Counter(v, json.RawMessage(`-1`))
	if string(v) != "4" {
		t.Fatalf("set then add: %s", v)
	}
	// No limit stays no limit.
	v, _ = Counter(json.RawMessage(`null`), json.RawMessage(`-1`))
	if string(v) != "null" {
		t.Fatalf("null counter changed: %s", v)
	}
	if _, err := Counter(v, json.RawMessage(`"x"`)); err == nil {
		t.Fatal("a string write was accepted")
	}
}

func TestTurnMapResets(t *testing.T) {
	v, err := TurnMap(nil, json.RawMessage(`{"a":1}`))
	if err == nil {
		v, err = TurnMap(v, json.RawMessage(`{"b":2}`))
	}
	if err != nil || string(v) != `{"a":1,"b":2}` {
		t.Fatalf("upserts = %s, %v", v, err)
	}
	if v, err = TurnMap(v, json.RawMessage(`{"$reset":{"c":3}}`)); err != nil || string(v) != `{"c":3}` {
		t.Fatalf("reset = %s, %v", v, err)
	}
	if v, err = TurnMap(v, json.RawMessage(`{"$reset":{}}`)); err != nil || string(v) != `{}` {
		t.Fatalf("reset to empty = %s, %v", v, err)
	}
}

// An object write stored as a patch against the value before it reads
// back as the write, whatever the objects' spelling.
func TestPatchObjectReadsBackAsTheWrite(t *testing.T) {
	objects := []string{`null`, `{}`, `{"text":"a","n":1}`, `{"text":"a","n":2,"extra":[1,{"x":null}]}`,
		`{ "text" : "b <&> \u2028" , "n" : 1 }`, `{"te\u0078t":"escaped key","n":1}`, `{"n":1,"n":3}`,
		`{"text":"` + strings.Repeat("long ", 300) + `","speakers":["user","critic"]}`}
	for _, cur := range objects {
		for _, w := range objects[1:] {
			stored := patchObject(json.RawMessage(cur), json.RawMessage(w))
			got, err := unpatchObject(json.RawMessage(cur), stored)
			if err != nil {
				t.Fatalf("%s over %s: stored %s does not read back: %v", w, cur, stored, err)
			}
			var a, b any
			if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(w), &b) != nil || !reflect.DeepEqual(a, b) {
				t.Fatalf("%s over %s: stored %s reads back as %s", w, cur, stored, got)
			}
		}
	}
}

// A value of the wrong JSON kind is refused in JSON's words, what the
// channel wants and what it got, not Go's ("cannot unmarshal bool into Go
// value of type map[string]json.RawMessage": issue 33 saw it from the
// TUI's e), and the decoder's error stays wrapped.
func TestWrongJSONKindIsNamedInJSONsWords(t *testing.T) {
	for _, c := range []struct {
		what string
		err  error
		want string
	}{
		{"an object channel given true", second(MergeMap(nil, json.RawMessage(`true`))), "want an object, got a boolean"},
		{"an object channel given a list", second(MergeMap(json.RawMessage(`{}`), json.RawMessage(`[1]`))), "want an object, got a list"},
		{"a list given an object", second(decodeList(json.RawMessage(`{"a":1}`))), "want a list of objects, got an object"},
		{"a list of numbers", second(decodeList(json.RawMessage(`[1]`))), "want a list of objects, got a list holding a number"},
	} {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.what, c.err, c.want)
		}
		var te *json.UnmarshalTypeError
		if !errors.As(c.err, &te) {
			t.Errorf("%s: the decoder's error is not wrapped: %#v", c.what, c.err)
		}
	}
}

func second[T any](_ T, err error) error { return err }
