package jsoncheck

import (
	"encoding/json"
	"strings"
	"testing"
)

type conn struct{ addr string }

type inner struct {
	C chan int `json:"c"`
}

type outer struct {
	inner        // promoted: its fields are at outer's path
	Name  string `json:"name"`
}

type hidden struct {
	Secret string `json:"-"`
	Note   string `json:"note,omitempty"`
}

// The path names the field as the stored JSON would, so the error a Send
// gives points at the argument to fix.
func TestUnencodableNamesThePathJSONWouldGive(t *testing.T) {
	type packet struct {
		Items []any          `json:"items"`
		ByKey map[string]any `json:"byKey"`
	}
	for want, v := range map[string]any{
		"items[1].c":         packet{Items: []any{1, outer{}}},
		`byKey["b"]`:         packet{ByKey: map[string]any{"a": 1, "b": func() {}}},
		`byKey["x"]["deep"]`: packet{ByKey: map[string]any{"x": map[string]any{"deep": complex(1, 2)}}},
		"c":                  outer{},
		"":                   make(chan int),
		`["k"]`:              map[string]any{"k": make(chan int)},
	} {
		if got := Unencodable(v); got != want {
			t.Errorf("Unencodable(%T) = %q, want %q", v, got, want)
		}
	}
}

func TestLossyNamesWhatJSONWouldDrop(t *testing.T) {
	for _, c := range []struct {
		v          any
		path, why  string
		wantsLossy bool
	}{
		{map[string]any{"db": &conn{addr: "x"}}, `["db"]`, "no exported field", true},
		{[]any{1, hidden{Secret: "s"}}, "[1]", "is not empty", true},
		{hidden{}, "", "", false},
		{map[string]any{"m": map[string]int{}}, "", "", false},
		{json.RawMessage(`{}`), "", "", false},
	} {
		enc, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		path, why, bad := Lossy(c.v, enc)
		if bad != c.wantsLossy || path != c.path || !strings.Contains(why, c.why) {
			t.Errorf("Lossy(%#v) = %q, %q, %v; want %q, …%s…, %v", c.v, path, why, bad, c.path, c.why, c.wantsLossy)
		}
	}
}
