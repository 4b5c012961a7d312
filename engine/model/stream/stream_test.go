package stream

import (
	"context"
	"testing"
)

func TestListenersChainAndCallsAreUnique(t *testing.T) {
	ctx := context.Background()
	if Listener(ctx) != nil || Listener(WithListener(ctx, nil)) != nil {
		t.Fatal("a context nobody listens on has a listener")
	}
	var outer, inner []string
	ctx = WithListener(ctx, func(d Delta) { outer = append(outer, d.Text) })
	ctx = WithListener(ctx, func(d Delta) { inner = append(inner, d.Text) })
	Listener(ctx)(Delta{Text: "a"})
	if len(outer) != 1 || len(inner) != 1 {
		t.Errorf("outer %v inner %v: both listeners should see the delta", outer, inner)
	}
	if a, b := NewCall(), NewCall(); a == b || a == 0 {
		t.Errorf("call ids %d %d", a, b)
	}
}
