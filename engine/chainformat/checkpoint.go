package chainformat

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"rewind/engine/internal/userpanic"
	"slices"
	"strconv"
	"time"

	"rewind/engine/model"
	"rewind/store"
)

// Checkpoint sources.
const (
	SourceInput  = "input"
	SourceLoop   = "loop"
	SourceUpdate = "update"
	SourceFork   = "fork"
	// SourceUnreadable marks a listed checkpoint whose listing does not
	// read (see Checkpoint.Unreadable).
	SourceUnreadable = "unreadable"
)

// Task is a node plus its arguments, not yet run at a checkpoint.
type Task struct {
	ID   string          `json:"id"`
	Node string          `json:"node"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Interrupt says why a run stopped with tasks still pending.
type Interrupt struct {
	When string `json:"when"` // "before", "after" or "approval"
	Node string `json:"node"`
	// Operation and Question describe what an approval gate waits for.
	Operation string `json:"operation,omitempty"`
	Question  string `json:"question,omitempty"`
}

// Metadata records how a checkpoint came to be.
type Metadata struct {
	// Nodes that ran (or whose stored writes were reused) in the superstep
	// that produced this checkpoint, in task order.
	Nodes []string `json:"nodes,omitempty"`
	// TaskCounts is how many tasks of each node the superstep had.
	TaskCounts map[string]int `json:"taskCounts,omitempty"`
	// Writes maps node → channels it wrote.
	Writes map[string][]string `json:"writes,omitempty"`
	// ModelCalls are the calls of the superstep's tasks by role, whether they
	// ran in this process or before a crash.
	ModelCalls map[string]int `json:"modelCalls,omitempty"`
	// Usage is the token count of those calls.
	Usage *model.Usage `json:"usage,omitempty"`
	// Tokens are the calls stored with the checkpoint (its tasks' model.called
	// events) by role, read from the listing: what Costs sums. Nil when
	// there were none, and for checkpoints stored before listings held them.
	Tokens map[string]RoleUsage `json:"tokens,omitempty"`
	// Reused lists tasks whose stored writes were used instead of running
	// them again (a resume after a crash mid-superstep).
	Reused     []string   `json:"reused,omitempty"`
	DurationMs int64      `json:"durationMs,omitempty"`
	Interrupt  *Interrupt `json:"interrupt,omitempty"`
	ForkedFrom int64      `json:"forkedFrom,omitempty"`
	// Replay marks a fork that runs ForkedFrom's due tasks again, with no
	// input (Engine.Replay).
	Replay bool   `json:"replay,omitempty"`
	AsNode string `json:"asNode,omitempty"`
	// Discarded are pending tasks dropped on purpose (a fork, a discard,
	// a cancel or a failed run).
	Discarded []Task `json:"discarded,omitempty"`
	// Status is the run's status as this checkpoint left it (see
	// RunStatus); Reason says why for failed, cancelled and paused at the
	// token budget. Empty for checkpoints stored before statuses were
	// recorded.
	Status string `json:"status,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Fixes are what the node that failed the run said would fix it, as
	// the engine's action names (engine.Action): Reason names no command.
	// None for listings stored before them.
	Fixes []string `json:"fixes,omitempty"`
	// Events is how many events were stored with the checkpoint (0 also
	// for checkpoints stored before they were counted).
	Events int `json:"events,omitempty"`
	// Sums are the running totals a turn's first checkpoint (an input or
	// a fork) keeps: what the checkpoints before it cost (Costs reads
	// them instead of every listing). Nil for the other checkpoints and
	// for listings stored before they held them.
	Sums *Sums `json:"sums,omitempty"`
	// Run is set on the first checkpoint a run wrote: which run, of what
	// kind, and the run it continues. Nil on the run's later checkpoints
	// (theirs is their parent's) and on checkpoints stored before runs
	// were recorded.
	Run *RunMark `json:"run,omitempty"`
	// Graph names the graph that wrote the checkpoint (the engine's
	// Graph.Name when it committed), on a run's first checkpoint, as Run,
	// and its last (Schema.Encode drops it from the others):
	// every checkpoint of a thread is its graph's, and a reader builds
	// that graph to read it. Empty on a run's later checkpoints and on
	// listings stored before graphs were recorded.
	Graph string `json:"graph,omitempty"`
}

// RunMark names a run: one invocation that writes to a thread (a turn,
// a resume, a fork, an answer, an edit, a cancel). Continues is the run
// whose checkpoint it carries on from (a resume's, an answer's, a
// cancel's): the run that stopped there.
type RunMark struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Continues string `json:"continues,omitempty"`
	// Session and SessionExpires (RFC 3339, UTC) are the session the run
	// acted in, when it carried one: a run that carries on from its
	// checkpoints without one of its own inherits it.
	Session        string `json:"session,omitempty"`
	SessionExpires string `json:"sessionExpires,omitempty"`
}

// pack is the mark as a listing stores it (position 24): [id, kind],
// then continues, then the session and its expiry, each only when set
// or before one that is.
func (m *RunMark) pack() []string {
	switch {
	case m == nil:
		return nil
	case m.Session != "":
		return []string{m.ID, m.Kind, m.Continues, m.Session, m.SessionExpires}
	case m.Continues != "":
		return []string{m.ID, m.Kind, m.Continues}
	}
	return []string{m.ID, m.Kind}
}

// unpackRun reads what pack stored.
func unpackRun(v []string) *RunMark {
	if len(v) == 0 || v[0] == "" {
		return nil
	}
	m := &RunMark{ID: v[0]}
	if len(v) > 1 {
		m.Kind = v[1]
	}
	if len(v) > 2 {
		m.Continues = v[2]
	}
	if len(v) > 4 {
		m.Session, m.SessionExpires = v[3], v[4]
	}
	return m
}

// Checkpoint is a decoded, migrated checkpoint.
type Checkpoint struct {
	Thread   string `json:"thread"`
	ID       int64  `json:"id"`
	ParentID int64  `json:"parentId"`
	// RerootedFrom is the parent a checkpoint had before that parent was pruned
	// (ParentID is then 0); 0 otherwise. See Engine.Prune.
	RerootedFrom  int64     `json:"rerootedFrom,omitempty"`
	Step          int       `json:"step"`
	Source        string    `json:"source"`
	SchemaVersion int       `json:"schemaVersion"`
	Values        Values    `json:"values"`
	Tasks         []Task    `json:"tasks"`
	Metadata      Metadata  `json:"metadata"`
	CreatedAt     time.Time `json:"createdAt"`
	// MigratedFrom is the stored schema version when it was older.
	MigratedFrom int `json:"migratedFrom,omitempty"`
	// Messages is how many items the transcript channel holds.
	Messages int `json:"messages"`
	// Bytes is what storing this checkpoint added to the store (its row,
	// new messages and blobs); 0 for checkpoints stored before it was
	// recorded.
	Bytes int `json:"bytes,omitempty"`
	// RowBytes is the checkpoint's own row (its listing and state).
	RowBytes int `json:"rowBytes,omitempty"`
	// Applied are the writes that made this checkpoint from its parent, by
	// task (or the input or update), in the order they were applied.
	Applied []WriteGroup `json:"applied,omitempty"`
	// Unreadable says why History could not read this checkpoint's
	// listing (corrupt, or written by a newer rewind); only its ids are
	// known.
	Unreadable string `json:"unreadable,omitempty"`
	// depth is how many deltas separate it from its stored base.
	depth int
	// tokensUnlisted: stored before listings held Tokens, with model
	// calls; Costs reads its state for them.
	tokensUnlisted bool
}

// TokensUnlisted says the checkpoint was stored before listings held
// Tokens, with model calls: Costs reads its state for them.
func (c Checkpoint) TokensUnlisted() bool { return c.tokensUnlisted }

// document is the stored JSON form (thread, ids and time live in the row).
type document struct {
	SchemaVersion int      `json:"schemaVersion"`
	Step          int      `json:"step"`
	Source        string   `json:"source"`
	Values        Values   `json:"values"`
	Tasks         []Task   `json:"tasks"`
	Metadata      Metadata `json:"metadata"`
}

var (
	// ErrNewerSchema: written by a newer rewind.
	ErrNewerSchema = errors.New("checkpoint schema is newer than this rewind")
	// ErrUnknownSchema: a version with no migration path.
	ErrUnknownSchema = errors.New("unknown checkpoint schema version")
	// ErrCorrupt: the stored document does not decode.
	ErrCorrupt = errors.New("checkpoint is corrupt")
)

// decodeLegacy reads a row stored before the incremental format (one
// whole document) through the migration registry, up to schema version
// target. It never half-reads: a newer, unknown or corrupt document is an
// error.
func (g *Schema) decodeLegacy(row store.Checkpoint, target int) (Checkpoint, error) {
	where := fmt.Sprintf("checkpoint %d of thread %q", row.ID, threadName(row.ThreadID))
	dec := json.NewDecoder(bytes.NewReader(row.State))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || doc == nil {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		return Checkpoint{}, fmt.Errorf("%s: %w (%v)", where, ErrCorrupt, err)
	}
	version := 1 // documents from before versions were recorded are v1
	if raw, ok := doc["schemaVersion"]; ok {
		n, ok := raw.(json.Number)
		v, err := strconv.Atoi(string(n))
		if !ok || err != nil {
			return Checkpoint{}, fmt.Errorf("%s: %w (schemaVersion %v is not an integer)", where, ErrCorrupt, raw)
		}
		version = v
	}
	from := version
	switch {
	case version > target:
		return Checkpoint{}, fmt.Errorf("%s has schema v%d but this rewind reads up to v%d: %w; upgrade rewind to open it", where, version, target, ErrNewerSchema)
	case version < 1:
		return Checkpoint{}, fmt.Errorf("%s has schema v%d: %w; it cannot be read", where, version, ErrUnknownSchema)
	}
	for ; version < target; version++ {
		m := g.Migrations[version]
		if m == nil {
			return Checkpoint{}, fmt.Errorf("%s has schema v%d and no migration to v%d exists: %w", where, version, version+1, ErrUnknownSchema)
		}
		if err := userpanic.Do(fmt.Sprintf("migration v%d to v%d", version, version+1), func() error { return m(doc) }); err != nil {
			return Checkpoint{}, fmt.Errorf("%s: migrating v%d to v%d: %w", where, version, version+1, err)
		}
		doc["schemaVersion"] = version + 1
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%s: %w (%v)", where, ErrCorrupt, err)
	}
	var d document
	if err := json.Unmarshal(b, &d); err != nil {
		return Checkpoint{}, fmt.Errorf("%s: %w (%v)", where, ErrCorrupt, err)
	}
	if d.Values == nil {
		d.Values = Values{}
	}
	// Channels added since the document was written read as their initial value.
	for _, name := range g.chanList {
		if _, ok := d.Values[name]; !ok {
			d.Values[name] = append(json.RawMessage(nil), g.channels[name].initial...)
		}
	}
	cp := Checkpoint{
		Thread:        row.ThreadID,
		ID:            row.ID,
		ParentID:      row.ParentID,
		RerootedFrom:  row.RerootedFrom,
		Step:          d.Step,
		Source:        d.Source,
		SchemaVersion: target,
		Values:        d.Values,
		Tasks:         d.Tasks,
		Metadata:      d.Metadata,
		CreatedAt:     row.CreatedAt,
	}
	if from != target {
		cp.MigratedFrom = from
	}
	if cp.Tasks == nil {
		cp.Tasks = []Task{}
	}
	cp.Messages = cp.Values.Len(g.transcriptOr("messages"))
	return cp, nil
}

// taskID is deterministic: the same tasks get the same ids after a restart.
func taskID(thread string, checkpoint int64, step int, node string, packet int) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s|%d|%d|%s|%d", len(thread), thread, checkpoint, step, node, packet)
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Values is a thread's state: channel name → JSON value.
type Values map[string]json.RawMessage

// Decode fills a struct from the channels (by their JSON names); with
// names, from those channels only (a node that reads two small channels
// need not decode the whole conversation).
func (v Values) Decode(dst any, names ...string) error {
	// Channel values are already JSON: splice them into one object rather
	// than re-encoding (and re-validating) every one of them.
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for k, raw := range v {
		if len(raw) == 0 || len(names) > 0 && !slices.Contains(names, k) {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		b.Write(raw)
	}
	b.WriteByte('}')
	return json.Unmarshal(b.Bytes(), dst)
}

// Len is the number of items of a list channel (0 when absent or not a list).
func (v Values) Len(channel string) int { return countList(v[channel]) }

// Items splits a list channel into its items, keeping their bytes (nil when
// absent).
func (v Values) Items(channel string) ([]json.RawMessage, error) { return splitList(v[channel]) }

// Migration turns a checkpoint document of version N into version N+1. It
// may only fill defaults and rename: if it could fail, a thread could never
// be restored.
type Migration func(doc map[string]any) error

type channelSpec struct {
	reducer Reducer
	initial json.RawMessage
	// kind is which of the engine's own reducers it is, if any: a replay
	// skips the writes a newer one replaces whole (see resets).
	kind reducerKind
}

// RoleUsage is the model calls of one role and their tokens.
type RoleUsage struct {
	Calls int `json:"calls"`
	model.Usage
}

// Sums are the running totals a turn's first checkpoint keeps
// (Metadata.Sums): what was spent before it.
type Sums struct {
	// Turns is how many turns (input and fork checkpoints) have a
	// smaller ID.
	Turns int `json:"turns"`
	// Thread is every checkpoint with a smaller ID, on every branch.
	Thread map[string]RoleUsage `json:"thread,omitempty"`
	// Branch is its parent's chain from the root, the parent included.
	Branch map[string]RoleUsage `json:"branch,omitempty"`
}
