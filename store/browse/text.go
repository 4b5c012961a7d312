package browse

// The words a reader shows for a listing, a status and a task's writes:
// written once here so the CLI's read commands and the TUI's browser say
// the same (they had drifted: "worker (Send)×3" against "worker(Send)×3",
// and rewind's own log said "executor ×3").
// The text is raw, as stored: the caller sanitizes it for the terminal
// (termtext.Name), which this package cannot import.

import (
	"fmt"
	"slices"
	"strings"
)

// DescribeNext names the tasks due, in order, neighbours of one node and
// kind grouped, as the engine words tasks (engine.DescribeTasks):
// "planner", "executor ×3", a queued Send (where the reader knows it)
// "worker (Send)", N of them "worker (Send) ×3"; "—" when nothing is due.
func DescribeNext(next []Task) string {
	var parts []string
	for _, d := range Group(next) {
		p := d.Node
		if d.Send {
			p += " (Send)"
		}
		if d.N > 1 {
			p += fmt.Sprintf(" ×%d", d.N)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

// Text is a thread's status in a word or three: "idle", "interrupted at
// review" (a task asked), "interrupted before review" (due tasks that
// stored nothing), "error at worker".
func (st Status) Text() string {
	switch st.State {
	case StateError:
		return "error at " + st.Where
	case StateInterrupted:
		if strings.HasPrefix(st.Where, "before ") {
			return "interrupted " + st.Where
		}
		return "interrupted at " + st.Where
	}
	return st.State
}

// Who names what made a task's writes: its node, the run's command, a
// state update, or "?" when the database does not say.
func (tw TaskWrites) Who() string {
	switch {
	case tw.Command:
		return "(the run's command)"
	case tw.Update:
		return "(a state update)"
	case tw.Node == "":
		return "?"
	}
	return tw.Node
}

// Head says how the state shown beside a Stored came from it: pending
// writes applied, DeltaChannels rebuilt, or both.
func (st Stored) Head() string {
	applied := st.Next != nil || slices.ContainsFunc(st.Channels, func(c StoredChannel) bool { return !c.Delta })
	rebuilt := slices.ContainsFunc(st.Channels, func(c StoredChannel) bool { return c.Delta })
	switch {
	case applied && rebuilt:
		return "the state applies the pending writes and rebuilds the DeltaChannels, as LangGraph's get_state does"
	case rebuilt:
		return "the state rebuilds the DeltaChannels, as LangGraph's get_state does"
	}
	return "the state and next apply the pending writes, as LangGraph's get_state does"
}

// DescribeStored says what a checkpoint stores for a channel its state
// shows otherwise, without the stored value itself (a caller prints a
// held one after it): "a DeltaChannel snapshot", "no value (a
// DeltaChannel: rebuilt from @ID's snapshot and the 29 writes since)".
// id prints a checkpoint id as the caller prints ids.
func DescribeStored(c StoredChannel, id func(string) string) string {
	switch {
	case c.Delta && c.Held:
		return "a DeltaChannel snapshot"
	case c.Delta && c.RebuiltFrom != "":
		return fmt.Sprintf("no value (a DeltaChannel: rebuilt from @%s's snapshot and the %s since)", id(c.RebuiltFrom), writes(c.Replayed))
	case c.Delta && c.Replayed > 0:
		return fmt.Sprintf("no value (a DeltaChannel with no snapshot on this branch: rebuilt from [] and the %s since its start)", writes(c.Replayed))
	case c.Delta:
		return "no value (a DeltaChannel never written on this branch: shown as its initial [])"
	case c.Held:
		return "as stored"
	}
	return "no value"
}

func writes(n int) string {
	if n == 1 {
		return "1 write"
	}
	return fmt.Sprintf("%d writes", n)
}

// DescribeAbsent says what a checkpoint that stores channels from their
// first write on (Checkpoint.FromFirstWrite) does not hold: the
// channels named (Checkpoint.Absent), or, when none is, that a reducer
// channel no node has written is not in the database either.
func DescribeAbsent(absent []string) string {
	const why = "this saver stores a channel from its first write on"
	if len(absent) == 0 {
		return "(" + why + ": a reducer channel no node has written, which LangGraph shows as its default, [] for a list, is in no row)"
	}
	return strings.Join(absent, ", ") + ": no value here (" + why + "; LangGraph shows a reducer's default there, [] for a list, and a value never written not at all)"
}
