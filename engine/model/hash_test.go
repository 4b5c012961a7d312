package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// marshalHash is what Hash was, and must stay: a stored request hash from
// an older rewind is compared with one made now.
func marshalHash(r Request) string {
	b, _ := json.Marshal(r)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestHashIsJSONMarshals writes random requests of hostile text (control
// bytes, HTML, invalid UTF-8, U+2028, quotes, non-ASCII), empty and nil
// lists, tools with raw schemas spaced out, and compares the hand-written
// bytes with json.Marshal's.
func TestHashIsJSONMarshals(t *testing.T) {
	pieces := []string{"", "a", "order SO20260901", `"`, `\`, "<b>", "&amp;", ">", "\n", "\r\n", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"é", "日本", "\u2028", "\u2029", "\xff", "\xe2\x80", "\xed\xa0\x80", "😀", "\ufffd", "{}", " "}
	text := func(rng *rand.Rand) string {
		var sb strings.Builder
		for n := rng.IntN(6); n > 0; n-- {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return sb.String()
	}
	raws := []json.RawMessage{nil, json.RawMessage(`{}`), json.RawMessage(" {\n \"type\" : \"object\", \"a\":[1, 2 ,3]}\t"),
		json.RawMessage(`{"d":"<a> & \u2028 b"}`), json.RawMessage("{\"e\":\"\u2028\u2029<>&\"}"), json.RawMessage(`"x"`), json.RawMessage(`null`)}
	rng := rand.New(rand.NewPCG(3, 5))
	for n := 0; n < 3000; n++ {
		r := Request{Role: text(rng)}
		if rng.IntN(5) > 0 {
			r.Messages = []Message{}
			for k := rng.IntN(5); k > 0; k-- {
				m := Message{Role: text(rng), Content: text(rng), ToolCallID: text(rng), Part: text(rng)}
				switch rng.IntN(3) {
				case 0:
					m.ToolCalls = []ToolCall{}
				case 1:
					for c := 1 + rng.IntN(2); c > 0; c-- {
						m.ToolCalls = append(m.ToolCalls, ToolCall{ID: text(rng), Name: text(rng), Arguments: text(rng)})
					}
				}
				r.Messages = append(r.Messages, m)
			}
		}
		switch rng.IntN(3) {
		case 0:
			r.Tools = []Tool{}
		case 1:
			r.Tools = []Tool{{Name: text(rng), Description: text(rng), Parameters: raws[rng.IntN(len(raws))]}}
		}
		if rng.IntN(2) == 0 {
			r.JSON = &Schema{Name: text(rng), Schema: raws[rng.IntN(len(raws))]}
		}
		r.KeepAnswer = rng.IntN(2) == 0 // not part of the request sent
		want, _ := json.Marshal(r)
		got, ok := appendRequest(nil, r)
		if !ok || string(got) != string(want) {
			t.Fatalf("request %d written by hand:\n%q (ok %v)\njson.Marshal:\n%q", n, got, ok, want)
		}
		if h := r.Hash(); h != marshalHash(r) {
			t.Fatalf("request %d: Hash %s, json.Marshal's %s", n, h, marshalHash(r))
		}
	}
}

// TestHashOfAnInvalidSchema: json.Marshal refuses a raw schema that is not
// JSON, and Hash hashed its empty output; it still does, whatever came
// before the schema.
func TestHashOfAnInvalidSchema(t *testing.T) {
	for _, raw := range []json.RawMessage{json.RawMessage(`{`), json.RawMessage(``), json.RawMessage(`{"a":1} x`)} {
		r := Request{Role: "critic", Messages: []Message{{Role: ChatUser, Content: "judge"}}, JSON: &Schema{Name: "v", Schema: raw}}
		if got, want := r.Hash(), marshalHash(r); got != want {
			t.Errorf("schema %q: Hash %s, json.Marshal's %s", raw, got, want)
		}
		r = Request{Role: "executor", Tools: []Tool{{Name: "t", Parameters: raw}}}
		if got, want := r.Hash(), marshalHash(r); got != want {
			t.Errorf("parameters %q: Hash %s, json.Marshal's %s", raw, got, want)
		}
	}
}

// BenchmarkHash is one executor-sized request: twelve messages and two
// tools.
func BenchmarkHash(b *testing.B) {
	r := Request{Role: "executor", Tools: []Tool{{Name: "lookup_order", Description: "Look an order up.", Parameters: json.RawMessage(`{"type":"object","properties":{"order":{"type":"string"}},"required":["order"]}`)}}}
	r.Messages = append(r.Messages, Message{Role: ChatSystem, Content: strings.Repeat("You are the executor. ", 20), Part: PartInstructions})
	for i := 0; i < 10; i++ {
		r.Messages = append(r.Messages, Message{Role: ChatUser, Content: strings.Repeat("My order SO20260901 hasn't arrived — where is it? ", 4), Part: PartTail})
	}
	r.Messages = append(r.Messages, Message{Role: ChatAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "lookup_order", Arguments: `{"order":"SO20260901"}`}}, Part: PartRounds})
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			_ = r.Hash()
		}
	})
	b.Run("marshal", func(b *testing.B) {
		for b.Loop() {
			_ = marshalHash(r)
		}
	})
}
