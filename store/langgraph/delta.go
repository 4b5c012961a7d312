package langgraph

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"rewind/store"
	"rewind/store/browse"
)

// A DeltaChannel (LangGraph.js's MessagesDeltaValue, beta) stores no value
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

// deltaSnapshot is the value a stored DeltaSnapshot holds.
func deltaSnapshot(v any) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
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
			stored = append(stored, browse.StoredChannel{Name: ch, Held: true, Value: v})
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
			stored = append(stored, browse.StoredChannel{Name: ch})
		}
	}
	if len(walk) == 0 {
		return stored, nil
	}
	parents, err := s.parents(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("rebuild channel %s of checkpoint %v of %s: %w", strings.Join(walk, ", "), store.Name(rw.id), c, err)
	}
	for _, ch := range walk {
		v, err := replayDelta(ctx, s, c, rw, ch, parents)
		if err != nil {
			return nil, fmt.Errorf("rebuild channel %q of checkpoint %v of %s: %w", store.Name(ch), store.Name(rw.id), c, err)
		}
		rw.doc.values[ch] = v
		stored = append(stored, browse.StoredChannel{Name: ch})
	}
	return stored, nil
}

// replayDelta rebuilds channel ch at rw: walking rw's ancestors to the
// nearest that holds a value, collecting their writes to ch, then
// applying them oldest first to that value ([] when none holds one).
func replayDelta(ctx context.Context, s snapshot, c Chain, rw row, ch string, parents map[string]string) (any, error) {
	var blocks [][]writeRow // newest ancestor first
	var seed any = []any{}
	seen := map[string]bool{}
	for id := rw.parent; id != "" && !seen[id]; id = parents[id] {
		seen[id] = true
		ws, err := s.writes(ctx, c, id, id, true)
		if err != nil {
			return nil, err
		}
		var mine []writeRow
		for _, w := range ws {
			if w.channel == ch {
				mine = append(mine, w)
			}
		}
		blocks = append(blocks, mine)
		anc, err := one(ctx, s, c, id, false)
		if err != nil {
			return nil, err
		}
		if _, held := anc.doc.values[ch]; !held {
			continue
		}
		if anc, err = one(ctx, s, c, id, true); err != nil {
			return nil, err
		}
		seed = anc.doc.values[ch]
		if v, ok := deltaSnapshot(seed); ok {
			seed = v
		}
		break
	}
	v := seed
	for i := len(blocks) - 1; i >= 0; i-- {
		for _, w := range blocks[i] {
			v = applyDelta(v, Decode(w.typ, w.value))
		}
	}
	return v, nil
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
