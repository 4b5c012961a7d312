package langgraph

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"rewind/store"
	"rewind/store/browse"
)

// A DeltaChannel (LangGraph.js's MessagesDeltaValue, LangGraph Python 1.2's
// channels.delta.DeltaChannel; beta) stores no value
// at most checkpoints: LangGraph rebuilds it from the nearest ancestor
// that holds one (a snapshot, {"lc": 2, "type": "delta_snapshot",
// "value": …}, written every snapshotFrequency updates) and replays the
// writes to the channel stored under each ancestor from there on, oldest
// first (BaseCheckpointSaver.getDeltaChannelHistory, then
// DeltaChannel.replayWrites). The checkpoint's metadata names its delta
// channels: counters_since_delta_snapshot {channel: [updates, steps]}.

const (
	metaDeltaCounters  = "counters_since_delta_snapshot"
	metaDeltaVersioned = "delta_writes_versioned"
)

// deltaSnapshot is the value a stored DeltaSnapshot holds: LangGraph.js's
// JSON form, or LangGraph Python's msgpack ext 7 (pyDeltaSnapshot).
func deltaSnapshot(v any) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	if m[KeyType] == pyDeltaSnapshot {
		val, has := m[KeyValue]
		return val, has
	}
	lc, _ := m["lc"].(int64)
	typ, _ := m["type"].(string)
	val, has := m["value"]
	if lc != 2 || typ != "delta_snapshot" || !has {
		return nil, false
	}
	return val, true
}

// deltaChannels are the checkpoint's delta channels: named by its
// metadata, or holding a snapshot.
func deltaChannels(rw row) []string {
	var out []string
	if cs, ok := rw.meta.all[metaDeltaCounters].(map[string]any); ok {
		for ch := range cs {
			out = append(out, ch)
		}
	}
	for ch, v := range rw.doc.values {
		if _, ok := deltaSnapshot(v); ok && !slices.Contains(out, ch) {
			out = append(out, ch)
		}
	}
	slices.Sort(out)
	return out
}

// rebuildDeltas puts the value LangGraph shows into each delta channel of
// rw (read in full): a snapshot's value, or the value rebuilt from the
// ancestors. It returns the channels as stored, for browse.Stored.
func rebuildDeltas(ctx context.Context, s snapshot, c Chain, rw row) ([]browse.StoredChannel, error) {
	chans := deltaChannels(rw)
	if len(chans) == 0 {
		return nil, nil
	}
	var stored []browse.StoredChannel
	var walk []string
	for _, ch := range chans {
		v, has := rw.doc.values[ch]
		if snap, ok := deltaSnapshot(v); ok {
			stored = append(stored, browse.StoredChannel{Name: ch, Held: true, Value: v, Delta: true})
			rw.doc.values[ch] = snap
			continue
		}
		_, versioned := rw.doc.versions[ch]
		switch {
		case has:
		case versioned, rw.meta.all[metaDeltaVersioned] != true:
			// Unversioned writes (an older updateState's) only the walk finds.
			walk = append(walk, ch)
		default:
			// Never written on this branch: LangGraph shows its
			// initial value, the empty list.
			rw.doc.values[ch] = []any{}
			stored = append(stored, browse.StoredChannel{Name: ch, Delta: true})
		}
	}
	if len(walk) == 0 {
		return stored, nil
	}
	a := &ancestors{s: s, c: c, before: rw.id, chans: walk}
	for _, ch := range walk {
		v, from, n, err := replayDelta(ctx, a, rw, ch)
		if err != nil {
			return nil, fmt.Errorf("rebuild channel %q of checkpoint %v of %s: %w", store.Name(ch), store.Name(rw.id), c, err)
		}
		rw.doc.values[ch] = v
		stored = append(stored, browse.StoredChannel{Name: ch, Delta: true, RebuiltFrom: from, Replayed: n})
	}
	return stored, nil
}

// ancestors are the rows older than a checkpoint that its delta
// channels' walks have read, shared by the walks: each read lean (ids,
// parents and which walked channels hold a value; no metadata, no
// values), a page at a time, newest first.
type ancestors struct {
	s      snapshot
	c      Chain
	chans  []string // the channels walked
	before string   // the oldest row read; "" once every older row is read
	rows   map[string]ancestor
}

// ancestor is what a walk needs of a row.
type ancestor struct {
	parent string
	doc    *doc
}

// next reads the page of up to limit rows older than those read; false
// once every row is read.
func (a *ancestors) next(ctx context.Context, limit int) (bool, error) {
	if a.before == "" {
		return false, nil
	}
	page, err := a.s.checkpoints(ctx, a.c, rowQuery{before: a.before, limit: limit, lean: true, held: a.chans})
	if err != nil {
		return false, err
	}
	a.before = ""
	if len(page) == limit {
		a.before = page[len(page)-1].id
	}
	if a.rows == nil {
		a.rows = make(map[string]ancestor, len(page))
	}
	for _, r := range page {
		a.rows[r.id] = ancestor{parent: r.parent, doc: r.doc}
	}
	return true, nil
}

// replayDelta rebuilds channel ch at rw: walking rw's ancestors to the
// nearest that holds a value, collecting their writes to ch, then
// applying them oldest first to that value ([] when none holds one). It
// returns the value, the ancestor it started from ("" for none) and how
// many writes it applied.
func replayDelta(ctx context.Context, a *ancestors, rw row, ch string) (v any, seed string, n int, err error) {
	path, seed, err := deltaPath(ctx, a, rw, ch)
	if err != nil {
		return nil, "", 0, err
	}
	v = []any{}
	if seed != "" {
		anc, err := one(ctx, a.s, a.c, seed, true)
		if err != nil {
			return nil, "", 0, err
		}
		v = anc.doc.values[ch]
		if snap, ok := deltaSnapshot(v); ok {
			v = snap
		}
	}
	if len(path) == 0 {
		return v, seed, 0, nil
	}
	ws, err := a.s.channelWrites(ctx, a.c, ch, path[len(path)-1], path[0])
	if err != nil {
		return nil, "", 0, err
	}
	on := map[string]bool{}
	for _, id := range path {
		on[id] = true
	}
	// ws are ordered by checkpoint id, and an ancestor's id is older
	// than its child's: oldest first.
	for _, w := range ws {
		if w.channel == ch && on[w.checkpoint] {
			v = applyDelta(v, Decode(w.typ, w.value))
			n++
		}
	}
	return v, seed, n, nil
}

// deltaPath is rw's ancestors, newest first, up to the nearest that holds
// channel ch (seed, "" when none does). Ancestors are read a page at a
// time, the first sized by rw's metadata, then twice the last.
func deltaPath(ctx context.Context, a *ancestors, rw row, ch string) (path []string, seed string, err error) {
	limit := firstDeltaPage(rw, ch)
	for id := rw.parent; id != ""; {
		r, read := a.rows[id]
		if !read {
			more, err := a.next(ctx, limit)
			if err != nil {
				return nil, "", err
			}
			if !more {
				break // every older row read; id is not among them
			}
			limit = min(2*limit, deltaPage)
			continue
		}
		path = append(path, id)
		if _, held := r.doc.values[ch]; held {
			return path, id, nil
		}
		if id = r.parent; slices.Contains(path, id) {
			break // a parent cycle (cycles.go)
		}
	}
	return path, "", nil
}

// deltaPage is the most listings a delta rebuild reads at a time: a
// snapshot is at most 100 updates back by default.
const deltaPage = 256

// firstDeltaPage is how many listings the rebuild of ch at rw reads
// first: the steps since ch's last snapshot that rw's metadata counts
// (counters_since_delta_snapshot {ch: [updates, steps]}), and a little
// more; deltaPage without them. Each listing decodes its checkpoint, and
// reading a full page for every checkpoint shown costs a chain of n
// checkpoints n²/2 decodes where the walk needs the steps since the
// snapshot. A wrong count costs another page, never a wrong value.
func firstDeltaPage(rw row, ch string) int {
	cs, _ := rw.meta.all[metaDeltaCounters].(map[string]any)
	counts, _ := cs[ch].([]any)
	n := 0
	for _, v := range counts {
		if k, ok := v.(int64); ok && k > 0 && k < deltaPage {
			n = max(n, int(k))
		}
	}
	if n == 0 {
		return deltaPage
	}
	return min(n+4, deltaPage)
}

// applyDelta applies one write as messagesDeltaReducer does (messages by
// id; a RemoveMessage with id __remove_all__ empties the list), and any
// other value as the reader's reduce.
func applyDelta(v, w any) any {
	list, _ := v.([]any)
	add, isList := w.([]any)
	if !isList {
		add = []any{w}
	}
	if _, ok := browse.Messages(add); !ok || len(add) == 0 {
		return reduce(v, true, w)
	}
	// A RemoveMessage with id __remove_all__ drops all before it.
	for i := len(add) - 1; i >= 0; i-- {
		if mm, ok := add[i].(map[string]any); ok && mm["id"] == "__remove_all__" {
			if msgs, _ := browse.Messages(add[i : i+1]); len(msgs) == 1 && msgs[0].Role == "remove" {
				list, add = nil, add[i+1:]
				break
			}
		}
	}
	return addMessages(list, add)
}

// withStored adds the delta channels as stored to st; a channel both
// rebuilt and then given pending writes keeps what the database holds.
func withStored(st *browse.Stored, deltas []browse.StoredChannel) *browse.Stored {
	if st == nil {
		st = &browse.Stored{}
	}
	for _, d := range deltas {
		at := slices.IndexFunc(st.Channels, func(c browse.StoredChannel) bool { return c.Name == d.Name })
		if at >= 0 {
			st.Channels[at] = d
		} else {
			st.Channels = append(st.Channels, d)
		}
	}
	slices.SortFunc(st.Channels, func(a, b browse.StoredChannel) int { return strings.Compare(a.Name, b.Name) })
	return st
}

// unheldDeltas counts the delta channels the checkpoint shows but does
// not store (a listing's channel count).
func (r row) unheldDeltas() int {
	n := 0
	for _, ch := range deltaChannels(r) {
		if _, held := r.doc.values[ch]; !held {
			n++
		}
	}
	return n
}
