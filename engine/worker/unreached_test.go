package worker_test

import (
	"strings"
	"testing"

	"rewind/engine/worker"
)

// A kill point never reached is said as the user gave it: a bare POINT
// is not shown as POINT@1, and "a smaller @N" is advised only when the
// point came at least once (there is no smaller @N than 1); the largest
// @N that would have killed is named.
func TestAnUnreachedKillPointSaysWhatToGive(t *testing.T) {
	for _, c := range []struct {
		err     worker.UnreachedError
		want    []string
		mustNot []string
	}{
		{worker.UnreachedError{Point: "before-summary", Nth: 1, Times: 0},
			[]string{"kill point before-summary was never reached", "nothing was killed", "give a point this run reaches"},
			[]string{"@1", "smaller"}},
		{worker.UnreachedError{Point: "before-summary", Nth: 3, Times: 0},
			[]string{"kill point before-summary@3 was never reached", "before-summary was reached 0 times", "nothing was killed"},
			[]string{"smaller"}},
		{worker.UnreachedError{Point: "mid-fanout", Nth: 2, Times: 1},
			[]string{"kill point mid-fanout@2 was never reached", "mid-fanout was reached 1 time; @2 never came", "nothing was killed", "mid-fanout@1 at most"},
			nil},
	} {
		got := c.err.Error()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v says %q: want %q", c.err, got, w)
			}
		}
		for _, w := range c.mustNot {
			if strings.Contains(got, w) {
				t.Errorf("%+v says %q: must not say %q", c.err, got, w)
			}
		}
	}
}
