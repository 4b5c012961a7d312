package browse

// Due is a run of tasks due to the same node in the same way: what a
// listing's "next" column shows as node×N.
type Due struct {
	Node string
	Send bool
	N    int
}

// Group joins neighbouring tasks of one node and kind, in order.
func Group(next []Task) []Due {
	var out []Due
	for _, t := range next {
		if n := len(out); n > 0 && out[n-1].Node == t.Node && out[n-1].Send == t.Send {
			out[n-1].N++
			continue
		}
		out = append(out, Due{Node: t.Node, Send: t.Send, N: 1})
	}
	return out
}
