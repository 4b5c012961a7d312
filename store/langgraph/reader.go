package langgraph

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"rewind/store"
	"rewind/store/browse"
)

// KindLangGraph is About.Kind of this package's sources.
const KindLangGraph = browse.KindLangGraph

// database is what a backend gives the reader: read-only snapshots.
type database interface {
	snapshot(ctx context.Context) (snapshot, error)
	about() About
	close() error
}

// snapshot reads one consistent view of the tables.
type snapshot interface {
	// namespaces lists every (thread, namespace) with its counts; with
	// one, thread's alone (through the key's index).
	namespaces(ctx context.Context, thread string, one bool) ([]nsRow, error)
	// hasID says whether chain c holds checkpoint id.
	hasID(ctx context.Context, c Chain, id string) (bool, error)
	// newest is the id of chain c's newest checkpoint ("" when it has
	// none), its row unread.
	newest(ctx context.Context, c Chain) (string, error)
	// taskCheckpoint is the first checkpoint of chain c where task stored
	// writes ("" when none).
	taskCheckpoint(ctx context.Context, c Chain, task string) (string, error)
	// checkpoints reads a chain's rows newest first (see rowQuery).
	checkpoints(ctx context.Context, c Chain, q rowQuery) ([]row, error)
	// parents maps each checkpoint of chain c to its parent ("" for none).
	parents(ctx context.Context, c Chain) (map[string]string, error)
	// firstWrites lists the channels chain c stores a value of anywhere
	// (asked of a checkpoint that stores a channel only from its first
	// write on, doc.firstWrite).
	firstWrites(ctx context.Context, c Chain) ([]string, error)
	// writes reads the writes of checkpoints from..to (ids, inclusive).
	// Without values, only Sends (__pregel_tasks) carry theirs.
	writes(ctx context.Context, c Chain, from, to string, values bool) ([]writeRow, error)
	// channelWrites reads the writes to channel ch of checkpoints
	// from..to, with their values (a delta channel's replay).
	channelWrites(ctx context.Context, c Chain, ch, from, to string) ([]writeRow, error)
	done()
}

// rowQuery picks rows: the one id, or those before before (all when ""),
// at most limit (all when <= 0); full reads every value. lean reads no
// metadata, and of the channels only which of held hold a value (a delta
// channel's walk: it needs only ids, parents and that); the others may
// show as holding none.
type rowQuery struct {
	id     string
	before string
	limit  int
	full   bool
	lean   bool
	held   []string
}

// reader is a Source over a database.
type reader struct{ db database }

func (r *reader) About() About { return r.db.about() }

func (r *reader) Close() error { return r.db.close() }

func (r *reader) Threads(ctx context.Context) ([]Thread, error) {
	return r.threads(ctx, "", false)
}

// Thread reads thread id alone (browse.ThreadFinder): its namespaces as
// Threads lists them, without reading any other thread's.
func (r *reader) Thread(ctx context.Context, id string) (Thread, bool, error) {
	ts, err := r.threads(ctx, id, true)
	if err != nil {
		return Thread{}, false, err
	}
	for _, t := range ts {
		if t.ID == id { // byte for byte, whatever the column's collation
			return t, true, nil
		}
	}
	return Thread{}, false, nil
}

// threads lists every thread, or with one the thread id alone.
func (r *reader) threads(ctx context.Context, id string, one bool) ([]Thread, error) {
	s, err := r.db.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer s.done()
	rows, err := s.namespaces(ctx, id, one)
	if err != nil {
		if one {
			return nil, fmt.Errorf("read thread %v: %w", store.Name(id), err)
		}
		return nil, fmt.Errorf("list threads: %w", err)
	}
	var lookupErr error
	ts := buildThreads(rows, func(thread, parentNS, task string) string {
		id, err := s.taskCheckpoint(ctx, Chain{Thread: thread, NS: parentNS}, task)
		if err != nil && lookupErr == nil {
			lookupErr = fmt.Errorf("list threads: find the checkpoint of thread %v that runs task %v: %w", store.Name(thread), store.Name(task), err)
		}
		return id
	})
	if lookupErr != nil {
		return nil, lookupErr
	}
	return ts, nil
}

// HasID says whether chain c holds checkpoint id (browse.IDChecker),
// reading that one row.
func (r *reader) HasID(ctx context.Context, c Chain, id string) (bool, error) {
	s, err := r.db.snapshot(ctx)
	if err != nil {
		return false, err
	}
	defer s.done()
	has, err := s.hasID(ctx, c, id)
	if err != nil {
		return false, fmt.Errorf("read checkpoint %v of %s: %w", store.Name(id), c, err)
	}
	return has, nil
}

func (r *reader) History(ctx context.Context, c Chain, before string, limit int) ([]Listing, error) {
	s, err := r.db.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer s.done()
	rows, err := s.checkpoints(ctx, c, rowQuery{before: before, limit: limit})
	if err != nil {
		return nil, fmt.Errorf("read the history of %s: %w", c, err)
	}
	if len(rows) == 0 {
		if before != "" {
			return []Listing{}, nil
		}
		return nil, notFound(c, "")
	}
	if err := cutCycles(ctx, s, c, rows); err != nil {
		return nil, err
	}
	counts, err := attachWrites(ctx, s, c, rows)
	if err != nil {
		return nil, err
	}
	out := make([]Listing, len(rows))
	for i, rw := range rows {
		out[i] = rw.listing(c, counts[rw.id], false)
	}
	return out, nil
}

func (r *reader) Checkpoint(ctx context.Context, c Chain, id string) (Checkpoint, error) {
	s, err := r.db.snapshot(ctx)
	if err != nil {
		return Checkpoint{}, err
	}
	defer s.done()
	rw, err := one(ctx, s, c, id, true)
	if err != nil {
		return Checkpoint{}, err
	}
	rows := []row{rw}
	if err := cutCycles(ctx, s, c, rows); err != nil {
		return Checkpoint{}, err
	}
	rw = rows[0]
	counts, ws, err := attachOwnWrites(ctx, s, c, rw)
	if err != nil {
		return Checkpoint{}, err
	}
	current := id == ""
	if !current {
		// Its id alone: decoding the newest row whole cost a show of an
		// older checkpoint a second document and its metadata.
		newest, err := s.newest(ctx, c)
		if err != nil {
			return Checkpoint{}, fmt.Errorf("read the newest checkpoint of %s: %w", c, err)
		}
		current = newest == rw.id
	}
	// The state as LangGraph's get_state computes it: delta channels
	// rebuilt (delta.go), pending writes applied (state.go).
	deltas, err := rebuildDeltas(ctx, s, c, rw)
	if err != nil {
		return Checkpoint{}, err
	}
	next, stored := rw.doc.pendingState(ws, rw.doc.next(true), siteOf(c, rw), current)
	cp := rw.checkpoint(c, counts[rw.id])
	if stored != nil {
		cp.Next, cp.Stored = next, stored
	}
	if len(deltas) > 0 {
		cp.Stored = withStored(cp.Stored, deltas)
	}
	if rw.doc.firstWrite && !old(rw.doc) {
		named, err := s.firstWrites(ctx, c)
		if err != nil {
			return Checkpoint{}, fmt.Errorf("list the channels of %s: %w", c, err)
		}
		cp.FromFirstWrite, cp.Absent = true, absent(named, cp.Channels)
	}
	return cp, nil
}

func (r *reader) Writes(ctx context.Context, c Chain, id string) ([]TaskWrites, error) {
	s, err := r.db.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer s.done()
	rw, err := one(ctx, s, c, id, false)
	if err != nil {
		return nil, err
	}
	_, ws, err := attachOwnWrites(ctx, s, c, rw)
	if err != nil {
		return nil, err
	}
	callees, err := calleesOf(ctx, s, c, rw, ws)
	if err != nil {
		return nil, err
	}
	return groupWrites(ws, rw.doc.next(false), siteOf(c, rw), callees), nil
}

// IDs lists chain c's checkpoint ids (browse.IDLister): what resolves a
// prefix, reading no listing.
func (r *reader) IDs(ctx context.Context, c Chain) ([]string, error) {
	s, err := r.db.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer s.done()
	ps, err := s.parents(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("list the checkpoints of %s: %w", c, err)
	}
	if len(ps) == 0 {
		return nil, notFound(c, "")
	}
	return slices.Collect(maps.Keys(ps)), nil
}

// one reads checkpoint id ("": the newest) of chain c.
func one(ctx context.Context, s snapshot, c Chain, id string, full bool) (row, error) {
	rows, err := s.checkpoints(ctx, c, rowQuery{id: id, limit: 1, full: full})
	if err != nil {
		return row{}, fmt.Errorf("read checkpoint %v of %s: %w", store.Name(id), c, err)
	}
	if len(rows) == 0 {
		return row{}, notFound(c, id)
	}
	return rows[0], nil
}

// attachWrites counts the rows' writes, and gives a checkpoint older than
// format 4 the Sends its parent's tasks stored (where LangGraph kept
// them then).
func attachWrites(ctx context.Context, s snapshot, c Chain, rows []row) (map[string]Counts, error) {
	counts, _, err := attachWritesOf(ctx, s, c, rows, false)
	return counts, err
}

// attachOwnWrites is attachWrites of one row that also gives the row's
// own writes with their values, read in the same query (its count and
// its writes were two reads).
func attachOwnWrites(ctx context.Context, s snapshot, c Chain, rw row) (map[string]Counts, []writeRow, error) {
	counts, ws, err := attachWritesOf(ctx, s, c, []row{rw}, true)
	if err != nil {
		return nil, nil, err
	}
	// An older format's range starts at the parent: keep the row's own,
	// in the order they were read (by checkpoint id, then as stored).
	var own []writeRow
	for _, w := range ws {
		if w.checkpoint == rw.id {
			own = append(own, w)
		}
	}
	return counts, own, nil
}

func attachWritesOf(ctx context.Context, s snapshot, c Chain, rows []row, values bool) (map[string]Counts, []writeRow, error) {
	lo, hi := rows[len(rows)-1].id, rows[0].id
	for _, rw := range rows {
		if old(rw.doc) && rw.parent != "" && rw.parent < lo {
			lo = rw.parent
		}
	}
	ws, err := s.writes(ctx, c, lo, hi, values)
	if err != nil {
		return nil, nil, fmt.Errorf("read the writes of %s: %w", c, err)
	}
	sends := map[string][]any{}
	for _, w := range ws {
		if w.channel == chanTasks {
			sends[w.checkpoint] = append(sends[w.checkpoint], Decode(w.typ, w.value))
		}
	}
	for _, rw := range rows {
		if old(rw.doc) && len(rw.doc.pendingSends) == 0 {
			rw.doc.pendingSends = sends[rw.parent]
		}
	}
	if err := nameEntrypoints(ctx, s, c, rows, ws); err != nil {
		return nil, nil, err
	}
	return countWrites(ws), ws, nil
}

// old: a checkpoint format before Sends moved into __pregel_tasks.
func old(d *doc) bool { return d.format > 0 && d.format < 4 }

func notFound(c Chain, id string) error { return &browse.NotFound{Chain: c, Checkpoint: id} }

// absent are the graph's channels of named (firstWrites) that chans has
// no value for: on PostgresSaver, a channel before its first write. A
// trigger channel (an older format's node channel) is not state.
func absent(named []string, chans []Channel) []string {
	var out []string
	for _, ch := range named {
		if internal(ch) || triggerOf(ch) != "" || slices.ContainsFunc(chans, func(c Channel) bool { return c.Name == ch }) {
			continue
		}
		out = append(out, ch)
	}
	slices.Sort(out)
	return out
}
