package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"

	"rewind/engine/model"
	"rewind/store"
	"rewind/store/browse"
)

// Browse is the engine read through browse.Source, the read-only interface
// a LangGraph database implements too: one interface, two sources. A
// rewind thread has one chain (namespace ""); ids are checkpoint numbers
// in base 10; values are the channels as JSON decodes them. about is what
// Source.About reports (the caller knows the store); Close closes nothing,
// the engine's owner does.
func (e *Engine) Browse(about browse.About) browse.Source {
	about.Kind = browse.KindRewind
	return browseSource{e, about}
}

type browseSource struct {
	e     *Engine
	about browse.About
}

func (s browseSource) About() browse.About { return s.about }

func (s browseSource) Close() error { return nil }

// notFound makes a missing thread or checkpoint match browse.ErrNotFound
// too, its message unchanged (the CLI prints it as the engine words it).
func notFound(err error) error {
	if errors.Is(err, store.ErrNotFound) && !errors.Is(err, browse.ErrNotFound) {
		return browseMissing{err}
	}
	return err
}

type browseMissing struct{ error }

func (m browseMissing) Unwrap() error { return m.error }

func (m browseMissing) Is(target error) bool { return target == browse.ErrNotFound }

func (s browseSource) Threads(ctx context.Context) ([]browse.Thread, error) {
	ts, err := s.e.Threads(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]browse.Thread, len(ts))
	for i, t := range ts {
		out[i] = BrowseThread(t)
	}
	return out, nil
}

// BrowseThread is a thread of the store as the engine's browse.Source
// lists it.
func BrowseThread(t store.Thread) browse.Thread {
	latest := strconv.FormatInt(t.LatestID, 10)
	return browse.Thread{ID: t.ID, Checkpoints: t.Checkpoints, Latest: latest, UpdatedAt: t.UpdatedAt,
		Namespaces: []browse.Namespace{{Checkpoints: t.Checkpoints, Latest: latest, UpdatedAt: t.UpdatedAt}}}
}

// browseID reads a checkpoint id given as text (0 for "").
func browseID(c browse.Chain, s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, Fixable(c.Thread, 0, fmt.Errorf("checkpoint %v not found in %s: rewind's checkpoints are numbers: %w", store.Name(s), c, browse.ErrNotFound), LogFix(c.Thread))
	}
	return n, nil
}

// chain refuses a namespace: rewind's graph has no subgraphs.
func chain(c browse.Chain) error {
	if c.NS != "" {
		return fmt.Errorf("%s not found: a rewind thread has one chain, namespace \"\": %w", c, browse.ErrNotFound)
	}
	return nil
}

func browseText(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

// Listing is cp of thread as browse.Source lists it, for a reader that
// read cp from the engine for more than the Source carries (rewind show).
func Listing(thread string, cp Checkpoint) browse.Listing {
	return browseListing(browse.Chain{Thread: thread}, cp)
}

func browseListing(c browse.Chain, cp Checkpoint) browse.Listing {
	l := browse.Listing{Chain: c, ID: browseText(cp.ID), Parent: browseText(cp.ParentID), Step: cp.Step, Source: cp.Source,
		CreatedAt: cp.CreatedAt, WrittenBy: cp.Metadata.Nodes, Next: []browse.Task{}, Damaged: cp.Unreadable,
		RerootedFrom: browseText(cp.RerootedFrom), Reused: cp.Metadata.Reused, Graph: cp.Metadata.Graph}
	l.Counts.Messages, l.Counts.Calls = cp.Messages, model.Counts(cp.Metadata.ModelCalls).Sum()
	if cp.Metadata.Replay {
		l.ReplayOf = browseText(cp.Metadata.ForkedFrom)
	}
	if in := cp.Metadata.Interrupt; in != nil {
		l.Interrupted = in.When + " " + in.Node
	}
	for _, t := range cp.Tasks {
		task := browse.Task{Node: t.Node}
		if len(t.Args) > 0 {
			task.Send = true
			_ = json.Unmarshal(t.Args, &task.Arg)
			l.Counts.Sends++
		}
		l.Next = append(l.Next, task)
	}
	return l
}

func (s browseSource) History(ctx context.Context, c browse.Chain, before string, limit int) ([]browse.Listing, error) {
	if err := chain(c); err != nil {
		return nil, err
	}
	b, err := browseID(c, before)
	if err != nil {
		return nil, err
	}
	rows, err := s.e.store.History(ctx, c.Thread, b, limit)
	if err != nil {
		return nil, fmt.Errorf("read history of thread %q: %w", threadName(c.Thread), err)
	}
	if len(rows) == 0 && before == "" {
		_, err := s.e.Latest(ctx, c.Thread) // says the thread is not found
		if err == nil {
			err = fmt.Errorf("%s has no checkpoints: %w", c, browse.ErrNotFound)
		}
		return nil, notFound(err)
	}
	out := make([]browse.Listing, len(rows))
	for i, row := range rows {
		out[i] = s.e.graph.browseListed(c, row)
	}
	return out, nil
}

// browseListed is a History row as browseListing lists Engine.History's
// checkpoint of it, read with Schema.Brief when it has a listing (a
// whole-chain log reads every row of the thread).
func (g *Graph) browseListed(c browse.Chain, row store.Checkpoint) browse.Listing {
	b, err := g.schema.Brief(row)
	if err != nil { // stored whole, or unreadable: as History says it
		return browseListing(c, g.listing(c.Thread, row))
	}
	l := browse.Listing{Chain: c, ID: browseText(row.ID), Parent: browseText(row.ParentID), Step: b.Step, Source: b.Source,
		CreatedAt: row.CreatedAt, WrittenBy: b.Nodes, Next: make([]browse.Task, len(b.Next)),
		RerootedFrom: browseText(row.RerootedFrom), Reused: b.Reused, Graph: b.Graph}
	l.Counts.Messages, l.Counts.Calls = b.Messages, b.Calls
	if b.Replay {
		l.ReplayOf = browseText(b.ForkedFrom)
	}
	if in := b.Interrupt; in != nil {
		l.Interrupted = in.When + " " + in.Node
	}
	for i, n := range b.Next {
		l.Next[i] = browse.Task{Node: n}
	}
	return l
}

func (s browseSource) Checkpoint(ctx context.Context, c browse.Chain, id string) (browse.Checkpoint, error) {
	if err := chain(c); err != nil {
		return browse.Checkpoint{}, err
	}
	n, err := browseID(c, id)
	if err != nil {
		return browse.Checkpoint{}, err
	}
	var cp Checkpoint
	if n == 0 {
		cp, err = s.e.Latest(ctx, c.Thread)
	} else {
		cp, err = s.e.Get(ctx, c.Thread, n)
	}
	if err != nil {
		return browse.Checkpoint{}, notFound(err)
	}
	out := browse.Checkpoint{Listing: browseListing(c, cp), Format: cp.SchemaVersion, Channels: []browse.Channel{}}
	for name, raw := range cp.Values {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			v = map[string]any{"$opaque": "json", "$size": len(raw), "$error": err.Error()}
		}
		out.Channels = append(out.Channels, browse.Channel{Name: name, Value: v, Raw: raw})
	}
	sort.Slice(out.Channels, func(i, j int) bool { return browse.Less(out.Channels[i], out.Channels[j]) })
	b, err := json.Marshal(cp.Metadata)
	if err == nil {
		_ = json.Unmarshal(b, &out.Metadata)
	}
	out.Counts.Channels = len(out.Channels)
	return out, nil
}

// Writes are the checkpoint's pending writes (a superstep still to finish)
// and what made its loop children (their Applied): as LangGraph keeps
// them, under the checkpoint the superstep ran from.
func (s browseSource) Writes(ctx context.Context, c browse.Chain, id string) ([]browse.TaskWrites, error) {
	if err := chain(c); err != nil {
		return nil, err
	}
	n, err := browseID(c, id)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		latest, err := s.e.Latest(ctx, c.Thread)
		if err != nil {
			return nil, notFound(err)
		}
		n = latest.ID
	} else if _, err := s.e.Get(ctx, c.Thread, n); err != nil {
		return nil, notFound(err)
	}
	pending, err := s.e.PendingWrites(ctx, c.Thread, n)
	if err != nil {
		return nil, err
	}
	out := []browse.TaskWrites{}
	add := func(task, node string, ws []Write) {
		tw := browse.TaskWrites{Task: task, Node: node, Writes: []browse.Write{}}
		for i, w := range ws {
			var v any
			if err := json.Unmarshal(w.Value, &v); err != nil {
				v = map[string]any{"$opaque": "json", "$size": len(w.Value), "$error": err.Error()}
			}
			tw.Writes = append(tw.Writes, browse.Write{Idx: i, Channel: w.Channel, Type: "json", Value: v})
		}
		out = append(out, tw)
	}
	for _, p := range pending {
		add(p.Task, p.Node, p.Writes)
	}
	all, err := s.e.History(ctx, c.Thread, 0, 0)
	if err != nil {
		return nil, err
	}
	for _, child := range all {
		if child.ParentID != n || child.Source != SourceLoop {
			continue
		}
		full, err := s.e.Get(ctx, c.Thread, child.ID)
		if err != nil {
			return nil, err
		}
		for _, g := range full.Applied {
			add(g.Task, g.Node, g.Writes)
		}
	}
	return out, nil
}
