package relation

import "testing"

// Each way two checkpoints can stand is worded as `rewind diff` and the
// TUI's compare show it, from their root-first ancestor chains.
func TestOf(t *testing.T) {
	id := func(n int64) int64 { return n }
	for _, c := range []struct {
		a, b   int64
		ca, cb []int64
		want   string
	}{
		{3, 3, nil, nil, "the same checkpoint"},
		{2, 4, []int64{1, 2}, []int64{1, 2, 3, 4}, "@2 is an ancestor of @4"},
		{4, 2, []int64{1, 2, 3, 4}, []int64{1, 2}, "@2 is an ancestor of @4"},
		{4, 5, []int64{1, 2, 3, 4}, []int64{1, 2, 5}, "different branches, parting after @2"},
		{4, 5, []int64{3, 4}, []int64{5}, "different branches with no common checkpoint left (pruned)"},
	} {
		if got := Of(c.a, c.b, c.ca, c.cb, id); got != c.want {
			t.Errorf("Of(@%d, @%d) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}
