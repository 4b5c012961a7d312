package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"rewind/store"
)

// StoredMessage is an original message of the conversation as stored,
// apart from checkpoints: it outlives compaction and prune.
type StoredMessage struct {
	Index int64           `json:"index"`
	Body  json.RawMessage `json:"message"`
	// Checkpoint is the checkpoint that first stored it.
	Checkpoint int64     `json:"checkpoint"`
	CreatedAt  time.Time `json:"createdAt"`
}

// ErrNoTranscript: the graph keeps no transcript channel.
var ErrNoTranscript = errors.New("this graph stores no transcript")

// Message returns original message #index of the branch that checkpoint at
// is on (0: the thread's newest), even when compaction folded it into the
// summary long ago.
func (e *Engine) Message(ctx context.Context, thread string, at, index int64) (StoredMessage, error) {
	if e.graph.schema.TranscriptChannel() == "" {
		return StoredMessage{}, ErrNoTranscript
	}
	if at == 0 {
		head, err := e.store.Latest(ctx, thread)
		if errors.Is(err, store.ErrNotFound) {
			return StoredMessage{}, threadNotFound(thread)
		}
		if err != nil {
			return StoredMessage{}, fmt.Errorf("read thread %q: %w", threadName(thread), err)
		}
		at = head.ID
	}
	onBranch, err := e.branchOf(ctx, thread, at)
	if err != nil {
		return StoredMessage{}, err
	}
	return e.messageOn(ctx, thread, at, index, onBranch)
}

// Transcript returns original messages #from to #to of the branch that
// checkpoint at is on (0: the thread's newest), as Message does for one,
// reading the branch once and the messages at once (Store.MessagesIn): a
// few reads, however long the range. An index no message has is left out.
func (e *Engine) Transcript(ctx context.Context, thread string, at, from, to int64) ([]StoredMessage, error) {
	if e.graph.schema.TranscriptChannel() == "" {
		return nil, ErrNoTranscript
	}
	if at == 0 {
		head, err := e.store.Latest(ctx, thread)
		if errors.Is(err, store.ErrNotFound) {
			return nil, threadNotFound(thread)
		}
		if err != nil {
			return nil, fmt.Errorf("read thread %q: %w", threadName(thread), err)
		}
		at = head.ID
	}
	onBranch, err := e.branchOf(ctx, thread, at)
	if err != nil {
		return nil, err
	}
	found, err := e.store.MessagesIn(ctx, thread, from, to)
	if err != nil {
		return nil, fmt.Errorf("read messages #%d to #%d of thread %q: %w", from, to, threadName(thread), err)
	}
	var out []StoredMessage
	for len(found) > 0 {
		n := 1 // found[:n] have one index (MessagesIn orders by index)
		for n < len(found) && found[n].Index == found[0].Index {
			n++
		}
		m, err := pickOn(thread, at, found[0].Index, found[:n], onBranch)
		found = found[n:]
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// branchOf is the ids of checkpoint at and its ancestors, as Ancestors
// lists them, from one read of the rows' ids and parents (Store.History:
// no listing is decoded).
func (e *Engine) branchOf(ctx context.Context, thread string, at int64) (map[int64]bool, error) {
	rows, err := e.store.History(ctx, thread, at+1, 0)
	if err != nil {
		return nil, fmt.Errorf("read history of thread %q: %w", threadName(thread), err)
	}
	if at < 1 || len(rows) == 0 || rows[0].ID != at {
		return nil, checkpointNotFound(thread, at)
	}
	parent := make(map[int64]int64, len(rows))
	for _, r := range rows {
		parent[r.ID] = r.ParentID
	}
	onBranch := map[int64]bool{}
	for next := at; next != 0; {
		p, ok := parent[next]
		switch {
		case !ok:
			return nil, fmt.Errorf("thread %q: a checkpoint of the branch of @%d has parent %d, which is missing: %w", threadName(thread), at, next, ErrCorrupt)
		case p >= next:
			return nil, fmt.Errorf("thread %q: checkpoint %d has parent %d, which is not older: %w", threadName(thread), next, p, ErrCorrupt)
		}
		onBranch[next] = true
		next = p
	}
	return onBranch, nil
}

func (e *Engine) messageOn(ctx context.Context, thread string, at, index int64, onBranch map[int64]bool) (StoredMessage, error) {
	found, err := e.store.MessagesAt(ctx, thread, index)
	if err != nil {
		return StoredMessage{}, fmt.Errorf("read message #%d of thread %q: %w", index, threadName(thread), err)
	}
	return pickOn(thread, at, index, found, onBranch)
}

// pickOn picks, of the stored messages #index (found, ordered by
// checkpoint), the one of the branch of checkpoint at (onBranch).
func pickOn(thread string, at, index int64, found []store.Message, onBranch map[int64]bool) (StoredMessage, error) {
	var pick []store.Message
	for _, m := range found {
		if onBranch[m.CheckpointID] {
			pick = append(pick, m)
		}
	}
	if len(pick) == 0 && len(found) == 1 {
		// Stored first by another branch that wrote the same message, or by
		// a checkpoint prune has since deleted.
		pick = found
	}
	switch {
	case len(found) == 0:
		return StoredMessage{}, missing{fmt.Sprintf("thread %q has no message #%d", threadName(thread), index), ShowFix(thread)}
	case len(pick) == 0:
		var where []string
		for _, m := range found {
			where = append(where, fmt.Sprintf("@%d", m.CheckpointID))
		}
		return StoredMessage{}, fmt.Errorf("thread %q has %d different messages #%d (first stored at %s), none on the branch of @%d: name a checkpoint of the branch you mean: %w", threadName(thread), len(found), index, strings.Join(where, ", "), at, store.ErrNotFound)
	}
	m := pick[len(pick)-1] // the newest branch point wins
	return StoredMessage{Index: m.Index, Body: m.Body, Checkpoint: m.CheckpointID, CreatedAt: m.CreatedAt}, nil
}
