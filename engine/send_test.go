package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"rewind/engine/internal/jsoncheck"
	"rewind/engine/model"
	"rewind/store/memory"
)

type sendPacket struct {
	Task struct {
		ID     string `json:"id"`
		Result any    `json:"result,omitempty"`
	} `json:"task"`
	Notes map[string]any `json:"notes,omitempty"`
	Items []any          `json:"items,omitempty"`
}

// A Send packet that json cannot encode fails the route with the node and
// the field named, at the superstep that routes it; no task with null
// arguments is ever stored.
func TestSendArgumentsMustEncode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		args  func() any
		field string
	}{
		{"channel in a nested field", func() any {
			var p sendPacket
			p.Task.ID, p.Task.Result = "t-1", make(chan int)
			return p
		}, "task.result"},
		{"NaN in a map", func() any { return sendPacket{Notes: map[string]any{"ok": 1, "score": math.NaN()}} }, `notes["score"]`},
		{"function in a list", func() any { return &sendPacket{Items: []any{"a", func() {}}} }, "items[1]"},
		{"the argument itself", func() any { return make(chan int) }, ""},
		// Issue 32, item 6: json encodes these without an error, as {}.
		{"a *sql.DB in a map", func() any { return sendPacket{Notes: map[string]any{"db": &sql.DB{}, "ok": 1}} }, `notes["db"]`},
		{"a struct of unexported fields", func() any {
			var p sendPacket
			p.Task.Result = conn{addr: "10.0.0.1:5432"}
			return p
		}, "task.result"},
		{"a filled struct json stores nothing of", func() any {
			return &sendPacket{Items: []any{"a", hidden{Secret: "s", Note: ""}}}
		}, "items[1]"},
		{"the argument itself, empty", func() any { return &sql.DB{} }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGraph("send-test", 1).
				Channel("log", IndexedAppend("index"), []any{}).
				Node("split", func(context.Context, *NodeContext) ([]Write, error) {
					return []Write{Put("log", []map[string]any{{"by": "split"}})}, nil
				}).
				Node("work", func(context.Context, *NodeContext) ([]Write, error) { return nil, nil }).
				Entry("split").
				Route("split", func(Values) ([]Target, error) {
					return []Target{Send("work", map[string]any{"fine": true}), Send("work", tc.args())}, nil
				}).
				Edge("work", End)
			st := memory.New()
			e, err := New(st, g, model.NewMock(model.Text(func(model.Request) (string, error) { return "ok", nil })))
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Run(t.Context(), "s", []Write{Put("log", []map[string]any{{"by": "input"}})}, RunConfig{})
			var se *SendError
			if !errors.As(err, &se) || se.Node != "work" || se.Field != tc.field {
				t.Fatalf("run: %v (%#v), want a SendError for work naming %q", err, se, tc.field)
			}
			want := "route after split: Send to work: "
			if tc.field != "" {
				want += "argument field " + tc.field + " cannot be stored as JSON"
			} else {
				want += "its argument cannot be stored as JSON"
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q lacks %q", err, want)
			}
			// Nothing past the input checkpoint was stored: no null packet.
			latest, err := st.Latest(context.Background(), "s")
			if err != nil || latest.ID != 1 || strings.Contains(string(latest.State), `"args":null`) {
				t.Fatalf("latest %d (%v): %s", latest.ID, err, latest.State)
			}
		})
	}
}

// conn stands for a connection: everything it holds is unexported.
type conn struct{ addr string }

// hidden is a struct json encodes as {} while it holds a value.
type hidden struct {
	Secret string `json:"-"`
	Note   string `json:"note,omitempty"`
}

// What json stores faithfully as {} or with no exported field of its own
// is still plain data: an empty struct, a zero one whose fields are all
// omitted, an empty map, a value that encodes itself.
func TestSendTakesFaithfulArguments(t *testing.T) {
	t.Parallel()
	for name, args := range map[string]any{
		"empty struct":        struct{}{},
		"zero, all omitted":   hidden{},
		"empty map":           map[string]any{"m": map[string]int{}},
		"a time":              map[string]any{"at": time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		"a nil pointer":       map[string]any{"db": (*sql.DB)(nil)},
		"raw JSON {}":         json.RawMessage(`{}`),
		"numbers":             []int{1, 2, 3},
		"a packet with {} in": sendPacket{Notes: map[string]any{"text": "{}"}},
	} {
		if tg := Send("work", args); tg.Err() != nil {
			t.Errorf("%s: %v", name, tg.Err())
		}
	}
}

func TestSendEncodesPlainArguments(t *testing.T) {
	t.Parallel()
	tg := Send("work", map[string]int{"n": 1})
	if tg.Err() != nil || string(tg.Args) != `{"n":1}` {
		t.Fatalf("Send = %s, %v", tg.Args, tg.Err())
	}
	var p sendPacket
	p.Task.Result = []any{1, map[string]any{"deep": make(chan int)}}
	if got := jsoncheck.Unencodable(p); got != `task.result[1]["deep"]` {
		t.Fatalf("unencodable = %q", got)
	}
	var raw json.RawMessage = []byte(`{"x":`)
	if got := jsoncheck.Unencodable(struct {
		R json.RawMessage `json:"r"`
	}{raw}); got != "r" {
		t.Fatalf("unencodable raw = %q", got)
	}
}
