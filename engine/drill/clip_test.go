package drill

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"rewind/engine"
)

// A drill that finds a resumed run's channel unlike the clean one's quotes
// both values, cut short: between characters, so the report is text (half
// an "é" prints as a replacement character or mangles the terminal line).
func TestADrillsDifferenceIsCutBetweenCharacters(t *testing.T) {
	t.Parallel()
	long := func(s string) json.RawMessage {
		b, _ := json.Marshal(strings.Repeat(s, 120)) // `"` and é×120: byte 160 falls inside an é
		return b
	}
	a := engine.Values{"answer": long("é")}
	b := engine.Values{"answer": long("è")}
	for name, diff := range map[string]func() (bool, string){
		"sameValues (any graph)": func() (bool, string) { return sameValues(a, b, nil) },
		"sameState (the ticket)": func() (bool, string) { return sameState(a, b) },
	} {
		same, line := diff()
		if same {
			t.Fatalf("%s: two different answers read as the same", name)
		}
		if !utf8.ValidString(line) || !strings.Contains(line, "é…(") {
			t.Errorf("%s: the difference is cut inside a character (or not cut): %q", name, line)
		}
	}
}
