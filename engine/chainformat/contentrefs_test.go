package chainformat

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// contentRefPattern is what contentRefs finds, as the regexp it replaced
// (whitespace as JSON has it: stored documents have no other).
var contentRefPattern = regexp.MustCompile(`\{[ \t\n\r]*"\$c"[ \t\n\r]*:[ \t\n\r]*"([0-9A-Za-z_-]{14})([^"\\]*)"[ \t\n\r]*\}`)

// contentRefs finds exactly the pattern's matches: in references as the
// encoder writes them, as jsonb gives them back, and in near misses built
// from their pieces at random.
func TestContentRefsMatchThePattern(t *testing.T) {
	fixed := []string{
		`{"$c":"abcdefghijklmnopcontent"}`,
		`[["messages",{"$m+":"x"}],["request",{"$c": "ABCDEFGHIJ_-01content"}]]`,
		`{"a": {"$c" : "ABCDEFGHIJ_-01text" }, "b": {"$c":"0123456789abcdcontent"}}`,
		`{"$c":"short"}`, `{"$c":"ABCDEFGHIJ_-01con\"tent"}`, `"{\"$c\":\"ABCDEFGHIJ_-01x\"}"`,
		`{ "$c":"ABCDEFGHIJ_-01"}`, `{"$c":"ABCDEFGHIJ_-0!x"}`, `{"$c":"ABCDEFGHIJ_-01x"`, `x{"$c"`, `"$c"`, ``,
		"{\f\"$c\"\t:\n\"ABCDEFGHIJ_-01é ü\"\r}",
	}
	pieces := []string{`{`, `}`, ` `, "\t", `"$c"`, `:`, `"`, `\`, `ABCDEFGHIJ_-01`, `abc`, `content`, `!`, `[`, `,`, `{"$c":"ABCDEFGHIJ_-01content"}`}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(14) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		fixed = append(fixed, b.String())
	}
	for _, in := range fixed {
		want := contentRefPattern.FindAllSubmatchIndex([]byte(in), -1)
		got := contentRefs([]byte(in))
		if len(got) != len(want) {
			t.Fatalf("%q: %d references, the pattern finds %d", in, len(got), len(want))
		}
		for i, m := range got {
			w := want[i]
			if m.start != w[0] || m.end != w[1] || string(m.hash) != in[w[2]:w[3]] || string(m.field) != in[w[4]:w[5]] {
				t.Fatalf("%q: reference %d is %d:%d %q %q, the pattern's %v", in, i, m.start, m.end, m.hash, m.field, w)
			}
		}
	}
}
