// Package browse is the read-only interface a browser of checkpointed
// threads reads, and its types: the threads, a chain's listings, the
// values at one checkpoint and the writes of the superstep that runs from
// it. Two sources implement it: LangGraph's checkpoint databases
// (store/langgraph) and rewind's own engine (engine.Browse). It imports
// no store backend and nothing but the store contract's naming, so the
// TUI and the engine may import it (cli/app/layering_test.go allows it by
// name, and checks it stays so).
package browse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"rewind/store"
)

// What a source holds (About.Kind).
const (
	KindRewind    = "rewind"
	KindLangGraph = "langgraph"
)

// Source is what a browser of checkpointed threads reads: the threads, a
// chain's listings, the values at one checkpoint and the writes of the
// superstep that runs from it. It never writes. The LangGraph readers
// (store/langgraph) and rewind's engine (engine.Browse) implement it, so a
// TUI or a read command written against it shows either.
//
// Every method is safe for concurrent use and takes a context. Ids are
// strings: LangGraph's are UUIDs, rewind's are numbers printed in base 10.
// A missing thread or checkpoint is an error matching ErrNotFound.
type Source interface {
	// About says what was opened, for a status bar.
	About() About
	// Threads lists every thread, newest first, with its namespaces.
	Threads(ctx context.Context) ([]Thread, error)
	// History lists a chain's checkpoints newest first: those older than
	// before when before is not "", at most limit when limit > 0. Listings
	// carry no values.
	History(ctx context.Context, c Chain, before string, limit int) ([]Listing, error)
	// Checkpoint reads the values at checkpoint id ("": the chain's newest).
	Checkpoint(ctx context.Context, c Chain, id string) (Checkpoint, error)
	// Writes lists the writes stored for the superstep that runs from
	// checkpoint id, by task, in task order: for a checkpoint whose tasks
	// are still due, the work done so far (kept on resume) and what failed
	// or interrupted; for one that has children, what made them.
	Writes(ctx context.Context, c Chain, id string) ([]TaskWrites, error)
	// Close releases the connections.
	Close() error
}

// ErrNotFound is matched (errors.Is) by a missing thread or checkpoint.
var ErrNotFound = errors.New("not found")

// NotFound is a chain that holds no checkpoints (Checkpoint ""), or a
// checkpoint its chain does not hold; it matches ErrNotFound. Where to
// look instead is the front end's to say (the CLI names the command that
// lists them).
type NotFound struct {
	Chain      Chain
	Checkpoint string
}

func (e *NotFound) Error() string {
	if e.Checkpoint == "" {
		return fmt.Sprintf("%s has no checkpoints", e.Chain)
	}
	return fmt.Sprintf("checkpoint %v not found in %s", store.Name(e.Checkpoint), e.Chain)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFound) Is(target error) bool { return target == ErrNotFound }

// About describes an open source.
type About struct {
	// Kind is "langgraph" (or "rewind" for rewind's own store).
	Kind string `json:"kind"`
	// Backend is "sqlite" or "postgres".
	Backend string `json:"backend"`
	// Where names the file or database, never a password.
	Where string `json:"where"`
	// Schema tells the table layout found (e.g. "PostgreSQL migrations
	// 0–9, task_path").
	Schema   string `json:"schema"`
	ReadOnly bool   `json:"readOnly"`
	// Note says what the database does not keep, when a reader must know
	// (a ShallowPostgresSaver's: only each thread's newest checkpoint).
	Note string `json:"note,omitempty"`
}

// Status is the one line a status bar shows.
func (a About) Status() string {
	s := "rewind store"
	if a.Kind == KindLangGraph {
		s = "LangGraph database"
	}
	if a.Note != "" {
		s += " (" + a.Note + ")"
	}
	if a.ReadOnly {
		s += ", read-only"
	}
	return s
}

// Chain names one checkpoint chain: a thread's root graph (NS "") or one
// run of a subgraph inside it (NS "node:<task id>", nested ones joined by
// "|").
type Chain struct {
	Thread string `json:"thread"`
	NS     string `json:"ns,omitempty"`
}

// Thread is one thread and the chains it holds.
type Thread struct {
	ID string `json:"id"`
	// Checkpoints counts the checkpoints of every namespace.
	Checkpoints int `json:"checkpoints"`
	// Latest is the root chain's newest checkpoint.
	Latest    string    `json:"latest"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Namespaces lists the root chain first, then the subgraphs', each
	// after its parent.
	Namespaces []Namespace `json:"namespaces"`
}

// Namespace is one chain of a thread. A subgraph's chain hangs off the
// checkpoint of its parent chain whose task ran the subgraph.
type Namespace struct {
	NS string `json:"ns"`
	// Node and Task name the parent's task that runs this subgraph (the
	// last "node:task" of NS); both "" for the root.
	Node string `json:"node,omitempty"`
	Task string `json:"task,omitempty"`
	// Parent is the enclosing namespace ("" for a top-level subgraph) and
	// ParentCheckpoint its checkpoint the task runs from ("" when the
	// database does not record it).
	Parent           string    `json:"parent,omitempty"`
	ParentCheckpoint string    `json:"parentCheckpoint,omitempty"`
	Checkpoints      int       `json:"checkpoints"`
	Latest           string    `json:"latest"`
	UpdatedAt        time.Time `json:"updatedAt"`
}

// Checkpoint sources (LangGraph's metadata "source", rewind's Source).
const (
	SourceInput  = "input"  // the input of a run
	SourceLoop   = "loop"   // a superstep
	SourceUpdate = "update" // update_state
	SourceFork   = "fork"   // a copy of a checkpoint, to run it again
)

// Listing is a checkpoint without its values: what a timeline shows.
type Listing struct {
	Chain
	ID     string `json:"id"`
	Parent string `json:"parent,omitempty"`
	// Step is LangGraph's superstep number (-1 for the input).
	Step      int       `json:"step"`
	Source    string    `json:"source"`
	CreatedAt time.Time `json:"createdAt"`
	// Next are the tasks due from this checkpoint: the nodes its updated
	// channels trigger, then one per queued Send.
	Next []Task `json:"next"`
	// WrittenBy names the nodes whose writes made this checkpoint, when
	// the database records it (older LangGraph metadata "writes").
	WrittenBy []string `json:"writtenBy,omitempty"`
	Counts    Counts   `json:"counts"`
	// Damaged says why the stored checkpoint or its metadata did not read
	// whole ("" when it did); what could be read is shown.
	Damaged string `json:"damaged,omitempty"`
	// RerootedFrom is the parent a checkpoint had before it was pruned
	// away (rewind's prune; Parent is then ""), ReplayOf the checkpoint a
	// replay runs again, Interrupted where the run stopped ("before
	// review"): what a rewind store records; "" on LangGraph's.
	RerootedFrom string `json:"rerootedFrom,omitempty"`
	ReplayOf     string `json:"replayOf,omitempty"`
	Interrupted  string `json:"interrupted,omitempty"`
	// Reused names the tasks whose stored writes a resume reused to make
	// this checkpoint (a run stopped at its parent): rewind's; nil on
	// LangGraph's.
	Reused []string `json:"reused,omitempty"`
	// Graph is the graph that wrote the checkpoint, where its listing
	// names it (a rewind run's first and last; "" on LangGraph's): the
	// TUI opens a thread on its graph from its first page. Out of the
	// JSON the CLI prints, whose listings `rewind show` names the graph of.
	Graph string `json:"-"`
}

// Counts says how much a checkpoint holds without reading it.
type Counts struct {
	// Channels with a value.
	Channels int `json:"channels"`
	// Sends queued (also in Next).
	Sends int `json:"sends,omitempty"`
	// Writes stored for the superstep from here, and the tasks that made
	// them; Errors and Interrupts count the tasks that failed or asked.
	Writes     int `json:"writes"`
	Tasks      int `json:"tasks"`
	Errors     int `json:"errors,omitempty"`
	Interrupts int `json:"interrupts,omitempty"`
	// Messages and model Calls the checkpoint holds, where the listing
	// records them (rewind's; LangGraph's does not).
	Messages int `json:"messages,omitempty"`
	Calls    int `json:"calls,omitempty"`
}

// Task is a task due at a checkpoint.
type Task struct {
	Node string `json:"node"`
	// Send marks a queued Send (a push task) rather than a node its
	// channels triggered.
	Send bool `json:"send,omitempty"`
	// Arg is a Send's argument (Checkpoint only; listings carry none).
	Arg any `json:"arg,omitempty"`
}

// Checkpoint is a listing with the values.
type Checkpoint struct {
	Listing
	// Format is LangGraph's checkpoint format version ("v").
	Format int `json:"format"`
	// Channels are sorted by name: the graph's own first, then the
	// internal ones.
	Channels []Channel `json:"channels"`
	// Metadata is the stored metadata, decoded.
	Metadata map[string]any `json:"metadata"`
	// Stored is what the database holds where Channels and Next show
	// the state as LangGraph's get_state computes it (pending writes
	// applied); nil when they are what was stored.
	Stored *Stored `json:"stored,omitempty"`
	// FromFirstWrite: the checkpoint stores a channel only from its first
	// write on (LangGraph's PostgresSaver, Python's SqliteSaver; LangGraph.js's
	// SqliteSaver stores a reducer's [] too), so a reducer channel no node
	// has written, which LangGraph shows as its default ([] for a list),
	// is in no row. Absent names the graph's channels that the chain's
	// other rows name and this checkpoint holds no value for: LangGraph
	// shows a reducer's default there and a LastValue's absence alike, and
	// no row tells which (DescribeAbsent words both).
	FromFirstWrite bool     `json:"fromFirstWrite,omitempty"`
	Absent         []string `json:"absent,omitempty"`
}

// Stored is the stored side of a checkpoint whose shown state applies
// pending writes: the channels those writes changed, as stored, and the
// tasks stored as due when finished ones left Next.
type Stored struct {
	Channels []StoredChannel `json:"channels,omitempty"`
	Next     []Task          `json:"next,omitempty"`
}

// StoredChannel is one channel as stored; Held is false when the stored
// checkpoint has no value for it.
type StoredChannel struct {
	Name  string `json:"name"`
	Held  bool   `json:"held"`
	Value any    `json:"value,omitempty"`
	// Delta marks a LangGraph DeltaChannel, which stores a snapshot at
	// some checkpoints (Value, held as stored: {"lc": 2, "type":
	// "delta_snapshot", "value": …}) and nothing at the others: the state
	// shows it rebuilt from the nearest snapshot and the writes since.
	Delta bool `json:"delta,omitempty"`
	// RebuiltFrom is the ancestor whose stored value (a snapshot) a
	// DeltaChannel not held here was rebuilt from ("" when no ancestor on
	// the branch holds one: from the empty list), Replayed how many of the
	// writes stored since it applied (DescribeStored words both).
	RebuiltFrom string `json:"rebuiltFrom,omitempty"`
	Replayed    int    `json:"replayed,omitempty"`
}

// Channel is one channel's value at a checkpoint.
type Channel struct {
	Name string `json:"name"`
	// Version is the channel's version, as text.
	Version string `json:"version,omitempty"`
	// Internal marks LangGraph's bookkeeping channels (__start__,
	// branch:to:NODE, __pregel_tasks …): a state view hides them, except
	// __pregel_tasks, whose Sends are also in Next.
	Internal bool `json:"internal,omitempty"`
	Value    any  `json:"value"`
	// Raw is the value as the source stored it, when JSON (rewind's):
	// State gives it back byte for byte, so a diff shows what was stored.
	Raw json.RawMessage `json:"-"`
}

// Value is channel name's value, and whether the checkpoint has one.
func (c Checkpoint) Value(name string) (any, bool) {
	for _, ch := range c.Channels {
		if ch.Name == name {
			return ch.Value, true
		}
	}
	return nil, false
}

// State is the graph's own channels as JSON, the shape engine.Values has,
// so engine.Diff compares two checkpoints of any source.
func (c Checkpoint) State() map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(c.Channels))
	for _, ch := range c.Channels {
		if ch.Internal {
			continue
		}
		if ch.Raw != nil {
			out[ch.Name] = ch.Raw
			continue
		}
		b, err := json.Marshal(ch.Value)
		if err != nil { // cannot happen for decoded values; keep it visible
			b, _ = json.Marshal(map[string]any{"$opaque": "unprintable", "$size": 0, "$error": err.Error()})
		}
		out[ch.Name] = b
	}
	return out
}

// Less orders the graph's channels before the internal ones, each by name.
func Less(a, b Channel) bool {
	if a.Internal != b.Internal {
		return !a.Internal
	}
	return a.Name < b.Name
}

// TaskWrites is what one task stored for a superstep.
type TaskWrites struct {
	Task string `json:"task"`
	// Node is the task's node when the database says (PostgreSQL's
	// task_path) or the checkpoint leaves no doubt (every due task runs
	// the same node); "" otherwise.
	Node string `json:"node,omitempty"`
	// Path is LangGraph's task path when stored.
	Path string `json:"path,omitempty"`
	// Command marks writes made by the run's input command (resume values
	// given with Command(resume=…)), not by a task.
	Command bool `json:"command,omitempty"`
	// Update marks writes a state update made against this checkpoint
	// (update_state / updateState): LangGraph gives that task the id
	// uuid5(checkpoint id, "__interrupt__"), which names no node.
	Update bool    `json:"update,omitempty"`
	Writes []Write `json:"writes"`
	// Error is the text of the task's error write ("" when it did not fail).
	Error string `json:"error,omitempty"`
	// Interrupts are the values the task interrupted with (interrupt()).
	Interrupts []Interrupt `json:"interrupts,omitempty"`
}

// Write is one stored write.
type Write struct {
	Idx     int    `json:"idx"`
	Channel string `json:"channel"`
	// Kind names LangGraph's special writes: "error", "scheduled",
	// "interrupt", "resume"; "" for a channel write.
	Kind string `json:"kind,omitempty"`
	// Type is the stored type ("msgpack", "json", "null" …).
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Interrupt is one value a task interrupted with.
type Interrupt struct {
	ID    string `json:"id,omitempty"`
	Value any    `json:"value"`
}

// String names a chain in messages.
func (c Chain) String() string {
	if c.NS == "" {
		return fmt.Sprintf("thread %v", store.Name(c.Thread))
	}
	return fmt.Sprintf("namespace %v of thread %v", store.Name(c.NS), store.Name(c.Thread))
}

// Relation says how checkpoints a and b of one chain stand ("the same
// checkpoint", "@A is an ancestor of @B", "different branches, parting
// after @C", "no common checkpoint"), walking parents over the chain's
// listings h: what `rewind diff` and the browser's diff say.
func Relation(h []Listing, a, b string) string {
	if a == b {
		return "the same checkpoint"
	}
	parent := make(map[string]string, len(h))
	for _, l := range h {
		parent[l.ID] = l.Parent
	}
	ancestors := func(id string) []string { // id first, root last
		var out []string
		seen := map[string]bool{}
		for id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
			id = parent[id]
		}
		return out
	}
	onA := map[string]bool{}
	for _, id := range ancestors(a) {
		onA[id] = true
	}
	common := ""
	for _, id := range ancestors(b) {
		if onA[id] {
			common = id
			break
		}
	}
	switch {
	case common == a:
		return fmt.Sprintf("@%s is an ancestor of @%s", a, b)
	case common == b:
		return fmt.Sprintf("@%s is an ancestor of @%s", b, a)
	case common != "":
		return fmt.Sprintf("different branches, parting after @%s", common)
	}
	return "no common checkpoint"
}
