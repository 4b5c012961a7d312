package ticketview

import "testing"

// Counted words read as English: "1 message", "#29" for a tail of one
// (issue 33 saw "1 messages", "#29–#29").
func TestCountsReadAsEnglish(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{convTitle(1, 1, 1, false), "conversation · 1 message"},
		{convTitle(1, 3, 3, false), "conversation · 3 messages"},
		{convTitle(29, 29, 1, true), "verbatim tail · #29 · 1 message"},
		{convTitle(27, 29, 3, true), "verbatim tail · #27–#29 · 3 messages"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
