package chainformat

import (
	"encoding/json"
	"testing"
)

// TestDropPatchedKeepsWhatNoNewerPatchNames drops, from the older object
// patches of a chain and from its base, exactly the fields a newer patch
// sets or deletes, leaves the forms it does not take whole, and rebuilds
// the same value as replaying every patch whole.
func TestDropPatchedKeepsWhatNoNewerPatchNames(t *testing.T) {
	g := objectSchema(t, "obj", "other")
	for _, c := range []struct {
		name    string
		base    string
		patches []string // newest first; patches[0] is the head's
		want    []string // what is left of each (""= not replayed)
		wantB   string
	}{{
		name:    "sets and deletes",
		base:    `{"a":-1,"b":1,"c":3,"d":4}`,
		patches: []string{`{"$o":{"a":1}}`, `{"$o":{"a":0,"b":2},"$d":["c"]}`, `{"$d":["a"]}`, `{"$o":{"e":5}}`},
		want:    []string{`{"$o":{"a":1}}`, `{"$o":{"b":2},"$d":["c"]}`, "", `{"$o":{"e":5}}`},
		wantB:   `{"d":4}`,
	}, {
		name:    "an older field no newer patch names",
		base:    `{"a":1,"text":{"$b":"0123456789abcdef0123"}}`,
		patches: []string{`{"$o":{"n":2}}`, `{"$o":{"n":1,"text":"new"},"$d":["a"]}`},
		want:    []string{`{"$o":{"n":2}}`, `{"$o":{"text":"new"},"$d":["a"]}`},
		wantB:   `{}`,
	}, {
		name:    "the head's own patches stay whole",
		base:    `{"a":1}`,
		patches: []string{`{"$o":{"a":2}}`},
		want:    []string{`{"$o":{"a":2}}`},
		wantB:   `{}`,
	}, {
		name:    "forms it does not take",
		base:    `{"$lit":{"$b":1,"a":1}}`,
		patches: []string{`{"$o":{"a":2}}`, `{"$o":{"$lit":{"$b":2,"a":1}}}`, `{"$O":{"a":1}}`, `{"$o":{"a":1,"a":1}}`, `{"$o":{"\u0061":1}}`, `{"$o":{"a":1},"$w":{"a":3}}`, `{"$o":{"a":1}}`},
		want:    []string{`{"$o":{"a":2}}`, `{"$o":{"$lit":{"$b":2,"a":1}}}`, `{"$O":{"a":1}}`, `{"$o":{"a":1,"a":1}}`, `{"$o":{"\u0061":1}}`, `{"$o":{"a":1},"$w":{"a":3}}`, ""},
		wantB:   `{"$lit":{"$b":1,"a":1}}`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			rows := make([]parsedRow, len(c.patches)+1)
			for i, p := range c.patches {
				rows[i].doc.Groups = []writeGroup{{Writes: []storedWrite{{Channel: "other", Value: json.RawMessage(`1`)}, {Channel: "obj", Value: json.RawMessage(p)}}}}
			}
			base := map[string]json.RawMessage{"obj": json.RawMessage(c.base), "other": json.RawMessage(`{"a":1}`)}
			g.dropPatched(rows, len(c.patches), base, map[string]bool{})
			for i, want := range c.want {
				if got := string(rows[i].doc.Groups[0].Writes[1].Value); got != want {
					t.Errorf("patch %d is %s, want %s", i, got, want)
				}
				if got := string(rows[i].doc.Groups[0].Writes[0].Value); got != "1" {
					t.Errorf("a write to another channel became %s", got)
				}
			}
			if string(base["obj"]) != c.wantB || string(base["other"]) != `{"a":1}` {
				t.Errorf("the base is %s and %s, want %s", base["obj"], base["other"], c.wantB)
			}
		})
	}
}

// TestDropPatchedRebuildsTheSame replays chains of plain patches with and
// without the dropped fields.
func TestDropPatchedRebuildsTheSame(t *testing.T) {
	g := objectSchema(t, "obj")
	keys := []string{"a", "b", "c"}
	for seed := 0; seed < 500; seed++ {
		n := 1 + seed%6
		patches := make([]string, n)
		x := uint32(seed*2654435761 + 1)
		next := func(m uint32) uint32 { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return x % m }
		for i := range patches {
			set, del := map[string]int{}, []string{}
			for _, k := range keys {
				switch next(3) {
				case 0:
					set[k] = int(next(100))
				case 1:
					del = append(del, k)
				}
			}
			p := objectPatch{Set: map[string]json.RawMessage{}, Del: del}
			for k, v := range set {
				p.Set[k], _ = json.Marshal(v)
			}
			b, _ := json.Marshal(p) // {} when it names nothing
			patches[i] = string(b)
		}
		replay := func(drop bool) string {
			rows := make([]parsedRow, n+1)
			for i, p := range patches {
				rows[i].doc.Groups = []writeGroup{{Writes: []storedWrite{{Channel: "obj", Value: json.RawMessage(p)}}}}
			}
			base := map[string]json.RawMessage{"obj": json.RawMessage(`{"a":-1,"b":-2,"c":-3}`)}
			if drop {
				g.dropPatched(rows, n, base, map[string]bool{})
			}
			v := base["obj"]
			for i := n - 1; i >= 0; i-- {
				w := rows[i].doc.Groups[0].Writes[0].Value
				if w == nil {
					continue
				}
				var err error
				if v, err = unpatchObject(v, w); err != nil {
					t.Fatalf("patches %q: %v", patches, err)
				}
			}
			return string(v)
		}
		if all, dropped := replay(false), replay(true); all != dropped {
			t.Fatalf("patches %q (newest first) replay as %s whole but %s dropped", patches, all, dropped)
		}
	}
}

// objectSchema is a schema of LastValue channels whose first is an object
// channel.
func objectSchema(t *testing.T, channels ...string) *Schema {
	t.Helper()
	g := NewSchema(1, nil)
	for _, c := range channels {
		if err := g.Channel(c, LastValue, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Object(channels[0]); err != nil {
		t.Fatal(err)
	}
	return g
}
