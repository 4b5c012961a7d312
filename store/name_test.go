package store_test

import (
	"fmt"
	"rewind/store"
	"strings"
	"testing"
)

// A Name in a message: a plain word bare (%s), anything else quoted, long
// ones clipped; never a raw control character.
func TestNameFormat(t *testing.T) {
	long := strings.Repeat("x", 100)
	cases := []struct{ id, s, q string }{
		{"ticket-1", "ticket-1", `"ticket-1"`},
		{"a/b:c@d.e+f=g,h_i", "a/b:c@d.e+f=g,h_i", `"a/b:c@d.e+f=g,h_i"`},
		{"ünïcödé日本", "ünïcödé日本", `"ünïcödé日本"`},
		{"my thread", `"my thread"`, `"my thread"`},
		{"evil\x1b]52;c;x\x07\n\t\r\u009b\u202e", `"evil\x1b]52;c;x\a\n\t\r\u009b\u202e"`, `"evil\x1b]52;c;x\a\n\t\r\u009b\u202e"`},
		{"", `""`, `""`},
		{long, strings.Repeat("x", 64) + "…(100 bytes)", `"` + strings.Repeat("x", 64) + `"…(100 bytes)`},
	}
	for _, c := range cases {
		if got := fmt.Sprintf("%s", store.Name(c.id)); got != c.s {
			t.Errorf("%%s of %q = %s, want %s", c.id, got, c.s)
		}
		if got := fmt.Sprintf("%q", store.Name(c.id)); got != c.q {
			t.Errorf("%%q of %q = %s, want %s", c.id, got, c.q)
		}
	}
}
