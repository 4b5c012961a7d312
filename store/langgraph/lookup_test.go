package langgraph_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"rewind/store/browse"
	"rewind/store/langgraph"
)

// lookupReads is what a source's one-thread and one-id lookups answered
// (browse.ThreadFinder, browse.IDChecker) beside its listings, for every
// thread, namespace and checkpoint id it lists, and for a prefix of each.
type lookupReads struct {
	threads result[[]langgraph.Thread]
	alone   map[string]found
	ids     map[langgraph.Chain]result[[]string]
	has     map[[3]string]result[bool]
}

type found struct {
	t   langgraph.Thread
	ok  bool
	err error
}

func readLookups(ctx context.Context, src langgraph.Source) lookupReads {
	r := lookupReads{alone: map[string]found{}, ids: map[langgraph.Chain]result[[]string]{}, has: map[[3]string]result[bool]{}}
	ts, err := src.Threads(ctx)
	r.threads = result[[]langgraph.Thread]{ts, err}
	finder, checker, lister := src.(browse.ThreadFinder), src.(browse.IDChecker), src.(browse.IDLister)
	for _, th := range ts {
		for _, id := range []string{th.ID, th.ID[:len(th.ID)-1], th.ID + "x"} {
			t, ok, err := finder.Thread(ctx, id)
			r.alone[id] = found{t, ok, err}
		}
		for _, n := range th.Namespaces {
			c := langgraph.Chain{Thread: th.ID, NS: n.NS}
			ids, err := lister.IDs(ctx, c)
			r.ids[c] = result[[]string]{ids, err}
			for _, id := range ids {
				for _, given := range []string{id, id[:len(id)-1]} {
					has, err := checker.HasID(ctx, c, given)
					r.has[[3]string{c.Thread, c.NS, given}] = result[bool]{has, err}
				}
			}
		}
	}
	return r
}

// A thread read alone is the thread Threads lists, namespaces and all,
// and only a whole id finds one; a checkpoint id is in a chain when the
// chain lists it, a prefix of it is not (it resolves through the list).
func TestOneThreadAndOneIDReadAsListed(t *testing.T) {
	t.Parallel()
	for _, cs := range caseSources() {
		t.Run(cs.name, func(t *testing.T) {
			t.Parallel()
			reads, _ := readCase(t, cs)
			r := reads.lookups
			if r.threads.err != nil || len(r.threads.v) == 0 {
				t.Fatalf("threads: %d, %v", len(r.threads.v), r.threads.err)
			}
			for _, th := range r.threads.v {
				r.checkThread(t, th)
			}
			if n := r.checkIDs(t); n == 0 {
				t.Fatal("no checkpoint id was listed")
			}
		})
	}
}

// checkThread: th read alone is th; its id cut or extended finds a thread
// only when one is listed by that id.
func (r lookupReads) checkThread(t *testing.T, th langgraph.Thread) {
	t.Helper()
	if got := r.alone[th.ID]; got.err != nil || !got.ok || !reflect.DeepEqual(got.t, th) {
		t.Errorf("thread %q read alone: %+v, %v, %v\nwant as listed: %+v", th.ID, got.t, got.ok, got.err, th)
	}
	for _, id := range []string{th.ID[:len(th.ID)-1], th.ID + "x"} {
		listed := slices.ContainsFunc(r.threads.v, func(o langgraph.Thread) bool { return o.ID == id })
		if got := r.alone[id]; got.err != nil || got.ok != listed || got.ok && got.t.ID != id {
			t.Errorf("thread %q read alone: %q, %v, %v; want found only as listed (%v)", id, got.t.ID, got.ok, got.err, listed)
		}
	}
}

// checkIDs: every listed id is in its chain, a prefix of one only when
// listed too. It returns how many ids it checked.
func (r lookupReads) checkIDs(t *testing.T) int {
	t.Helper()
	n := 0
	for c, ids := range r.ids {
		if ids.err != nil {
			t.Errorf("ids of %s: %v", c, ids.err)
		}
		for _, id := range ids.v {
			n++
			if got := r.has[[3]string{c.Thread, c.NS, id}]; got.err != nil || !got.v {
				t.Errorf("%s has %s: %v, %v; want true, as it lists it", c, id, got.v, got.err)
			}
			prefix := id[:len(id)-1]
			if got := r.has[[3]string{c.Thread, c.NS, prefix}]; got.err != nil || got.v != slices.Contains(ids.v, prefix) {
				t.Errorf("%s has %s: %v, %v; want only a listed id", c, prefix, got.v, got.err)
			}
		}
	}
	return n
}
