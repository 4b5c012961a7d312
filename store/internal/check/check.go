// Package check holds the input rules and the JSON comparison that every
// store backend applies alike, so that all of them refuse the same calls
// and agree on what "the same content" is: PostgreSQL text cannot hold NUL
// or invalid UTF-8, its numeric type has a range, and jsonb compares JSON
// values, not bytes.
package check

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"rewind/store"
)

// Name quotes a thread, task or operation id for messages, cut short: ids
// may be huge.
type Name = store.Name

// invalid is refused input: it matches store.ErrInvalid, and its message
// says what is wrong without the sentinel's text.
type invalid struct{ msg string }

func (e *invalid) Error() string { return e.msg }
func (e *invalid) Unwrap() error { return store.ErrInvalid }

// Invalid returns a refusal that matches store.ErrInvalid.
func Invalid(format string, args ...any) error {
	return &invalid{msg: fmt.Sprintf(format, args...)}
}

// Text checks an id or a type name.
func Text(what, s string) error {
	switch {
	case s == "":
		return Invalid("%s is empty", what)
	case !utf8.ValidString(s):
		return Invalid("%s is not valid UTF-8", what)
	case strings.IndexByte(s, 0) >= 0:
		return Invalid("%s contains a NUL byte", what)
	}
	return nil
}

// JSON accepts what encoding/json accepts (so at most 10,000 levels of
// nesting), only valid UTF-8, and only numbers PostgreSQL's numeric can
// hold, so that every backend takes the same documents.
func JSON(what string, doc []byte) error {
	if len(doc) == 0 {
		return Invalid("%s is empty; it must be a JSON document", what)
	}
	if accepts(doc) {
		return nil
	}
	return refusal(what, doc)
}

// refusal is JSON's rule in three passes, which say what is wrong.
func refusal(what string, doc []byte) error {
	if !json.Valid(doc) {
		var v json.RawMessage
		return Invalid("%s is not valid JSON: %v", what, json.Unmarshal(doc, &v))
	}
	if !utf8.Valid(doc) {
		return Invalid("%s is not valid UTF-8", what)
	}
	return numbers(what, doc)
}

// Epoch checks a writer's fencing epoch: 0 is unfenced, more is a token
// from Fence.
func Epoch(e int64) error {
	if e < 0 {
		return Invalid("epoch %d is negative; use 0 (unfenced) or the epoch Fence returned", e)
	}
	return nil
}

// Put validates a checkpoint and returns its events normalised: thread
// and checkpoint filled in, Seq 0 numbered by position, an empty payload
// made {}, sorted by Seq.
func Put(cp store.Checkpoint, events []store.Event) ([]store.Event, error) {
	if err := Text("thread id", cp.ThreadID); err != nil {
		return nil, err
	}
	if cp.ID < 1 {
		return nil, Invalid("checkpoint id %d: ids start at 1", cp.ID)
	}
	if cp.ParentID < 0 {
		return nil, Invalid("parent id %d is negative; 0 means a root", cp.ParentID)
	}
	if err := Epoch(cp.Epoch); err != nil {
		return nil, err
	}
	if err := JSON("state", cp.State); err != nil {
		return nil, err
	}
	if len(cp.Head) > 0 {
		if err := JSON("head snapshot", cp.Head); err != nil {
			return nil, err
		}
	}
	if err := content(cp); err != nil {
		return nil, err
	}
	out := make([]store.Event, len(events))
	for i, e := range events {
		if e.Seq == 0 {
			e.Seq = i + 1
		}
		switch {
		case e.ThreadID != "" && e.ThreadID != cp.ThreadID:
			return nil, Invalid("event %d belongs to thread %v", i+1, Name(e.ThreadID))
		case e.CheckpointID != 0 && e.CheckpointID != cp.ID:
			return nil, Invalid("event %d belongs to checkpoint %d", i+1, e.CheckpointID)
		case e.Seq < 0:
			return nil, Invalid("event %d has seq %d; seqs start at 1", i+1, e.Seq)
		case e.Seq > math.MaxInt32: // PostgreSQL keeps seq as an integer
			return nil, Invalid("event %d has seq %d; seqs must stay below 2^31", i+1, e.Seq)
		}
		if err := Text(fmt.Sprintf("type of event %d", i+1), e.Type); err != nil {
			return nil, err
		}
		if len(e.Payload) == 0 {
			e.Payload = []byte("{}")
		} else if !accepts(e.Payload) { // named only when refused: Sprintf costs
			return nil, JSON(fmt.Sprintf("payload of event %d", i+1), e.Payload)
		}
		e.ThreadID, e.CheckpointID = cp.ThreadID, cp.ID
		out[i] = e
	}
	slices.SortFunc(out, func(a, b store.Event) int { return a.Seq - b.Seq })
	for i := 1; i < len(out); i++ {
		if out[i].Seq == out[i-1].Seq {
			return nil, Invalid("two events have seq %d", out[i].Seq)
		}
	}
	return out, nil
}

// content checks what a checkpoint carries besides its state.
func content(cp store.Checkpoint) error {
	if len(cp.Meta) > 0 {
		if err := JSON("meta", cp.Meta); err != nil {
			return err
		}
	}
	if cp.Settles != 0 && cp.Settles != cp.ParentID {
		return Invalid("checkpoint %d settles checkpoint %d: it can only settle its parent's superstep (%d)", cp.ID, cp.Settles, cp.ParentID)
	}
	if err := Hashes("blob reference", cp.BlobRefs); err != nil {
		return err
	}
	for i, m := range cp.Messages {
		if m.ThreadID != "" && m.ThreadID != cp.ThreadID {
			return Invalid("message %d belongs to thread %v", i+1, Name(m.ThreadID))
		}
		if !bodyOK(m.Hash, m.Body) {
			return Body(fmt.Sprintf("message %d", i+1), m.Hash, m.Body)
		}
		if m.Index < 0 {
			return Invalid("message %d has index %d; indices are not negative", i+1, m.Index)
		}
	}
	for i, b := range cp.Blobs {
		if !bodyOK(b.Hash, b.Body) {
			return Body(fmt.Sprintf("blob %d", i+1), b.Hash, b.Body)
		}
	}
	return nil
}

// Body checks a message or blob: a JSON document named by its ContentHash.
func Body(what, hash string, body []byte) error {
	if err := JSON(what, body); err != nil {
		return err
	}
	if h, sealed := store.SealedHash(body); sealed && h == hash {
		return nil
	}
	if want := store.ContentHash(body); hash != want {
		return Invalid("%s has hash %q but its body hashes to %q", what, hash, want)
	}
	return nil
}

// bodyOK is Body's rule without its message.
func bodyOK(hash string, body []byte) bool {
	if len(hash) != store.HashLen || !accepts(body) {
		return false
	}
	if h, sealed := store.SealedHash(body); sealed {
		return h == hash
	}
	sum := sha256.Sum256(body)
	var h [store.HashLen]byte
	hex.Encode(h[:], sum[:store.HashLen/2])
	return string(h[:]) == hash
}

// Hashes checks content hashes: HashLen lowercase hex digits each.
func Hashes(what string, hs []string) error {
	for _, h := range hs {
		if !IsHash(h) {
			return Invalid("%s %q is not a content hash (%d lowercase hex digits)", what, h, store.HashLen)
		}
	}
	return nil
}

// IsHash reports whether h has the form of a ContentHash.
func IsHash(h string) bool {
	if len(h) != store.HashLen {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Rebases validates Prune's rebases against the checkpoints it re-roots:
// kept (id → whether it reads on its own) for every checkpoint it
// re-roots. Every re-rooted checkpoint that does not read on its own
// needs one, and only those may have one.
func Rebases(rebase []store.Rebase, rerooted map[int64]bool) error {
	seen := map[int64]bool{}
	for _, r := range rebase {
		selfContained, ok := rerooted[r.ID]
		switch {
		case !ok:
			return Invalid("a rebase for checkpoint %d, which this prune does not re-root; nothing was pruned", r.ID)
		case selfContained:
			return Invalid("a rebase for checkpoint %d, which already reads on its own; nothing was pruned", r.ID)
		case seen[r.ID]:
			return Invalid("two rebases for checkpoint %d; nothing was pruned", r.ID)
		}
		seen[r.ID] = true
		if err := JSON(fmt.Sprintf("rebase of checkpoint %d", r.ID), r.State); err != nil {
			return err
		}
		if err := Hashes("blob reference", r.BlobRefs); err != nil {
			return err
		}
	}
	ids := make([]int64, 0, len(rerooted))
	for id, selfContained := range rerooted {
		if !selfContained && !seen[id] {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		return Invalid("pruning would leave checkpoint %d unreadable: its parent goes and it holds only a delta; give a rebase for it; nothing was pruned", slices.Min(ids))
	}
	return nil
}

// SameParent says whether a put's parent matches a stored checkpoint's
// for the no-op rule: a re-rooted checkpoint (stored parent 0, its old
// parent in rerootedFrom) matches both 0 and the parent it had.
func SameParent(stored, rerootedFrom, put int64) bool {
	return put == stored || stored == 0 && rerootedFrom != 0 && put == rerootedFrom
}

// PruneIDs returns the ids of a Prune call sorted, without duplicates, in
// a new slice.
func PruneIDs(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// PruneMissing is Prune's error for an id that is not a checkpoint of the
// thread.
func PruneMissing(id int64) error {
	return fmt.Errorf("checkpoint %d is not a checkpoint of the thread; nothing was pruned: %w", id, store.ErrNotFound)
}

// PruneHead is Prune's refusal of the thread's newest checkpoint.
func PruneHead(id int64) error {
	return Invalid("checkpoint %d is the thread's newest, which prune always keeps so that ids never go back; nothing was pruned: leave it out, or delete the whole thread", id)
}

// Writes validates one task's writes.
func Writes(w store.TaskWrites) error {
	if err := Text("thread id", w.ThreadID); err != nil {
		return err
	}
	if err := Text("task id", w.TaskID); err != nil {
		return err
	}
	if w.CheckpointID < 1 {
		return Invalid("checkpoint id %d: ids start at 1", w.CheckpointID)
	}
	if err := Epoch(w.Epoch); err != nil {
		return err
	}
	return JSON("writes", w.Writes)
}

// SameMeta compares two metadata documents, either of which may be
// absent.
func SameMeta(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return SameJSON(a, b)
}

// SameEvents compares events normalised by Put.
func SameEvents(a, b []store.Event) bool {
	return slices.EqualFunc(a, b, func(x, y store.Event) bool {
		return x.Seq == y.Seq && x.Type == y.Type && SameJSON(x.Payload, y.Payload)
	})
}

// Draft validates a draft to create.
func Draft(d store.Draft) error {
	if err := Text("thread id", d.ThreadID); err != nil {
		return err
	}
	if err := Text("operation id", d.OperationID); err != nil {
		return err
	}
	return JSON("body", d.Body)
}

// Fenced decides a write carrying epoch on a thread whose writer epoch is
// current (0: the thread has none, because it was never fenced or was
// deleted since), once the write is known not to be a no-op. issued is
// the highest epoch the store has handed out to any thread; it matters
// only when current is 0, so a store may pass 0 without reading it
// otherwise.
func Fenced(thread string, epoch, current, issued int64) error {
	switch {
	case epoch == 0 || epoch == current:
		return nil
	case epoch < current, current == 0 && epoch <= issued:
		return &fenced{thread: thread, epoch: epoch, current: current}
	}
	return Invalid("epoch %d was never handed out for thread %v (its current epoch is %d); write with the epoch Fence returned", epoch, Name(thread), current)
}

// fenced names the thread and both epochs, and matches store.ErrFenced.
type fenced struct {
	thread         string
	epoch, current int64
}

func (e *fenced) Error() string {
	if e.current == 0 {
		return fmt.Sprintf("a newer writer took over thread %v and deleted it (this process has epoch %d): this process's writes are refused",
			Name(e.thread), e.epoch)
	}
	return fmt.Sprintf("a newer writer took over thread %v (epoch %d; this process has %d): this process's writes are refused; its work will be redone by the new writer",
		Name(e.thread), e.current, e.epoch)
}

func (e *fenced) Unwrap() error { return store.ErrFenced }

// Query is a search's words (store.SearchQuery), or a refusal: a query
// with none, or with more than store.MaxQueryWords.
func Query(q string) ([]string, error) {
	words := store.SearchQuery(q)
	switch {
	case len(words) == 0:
		return nil, Invalid("the query has no word to search for: give letters or digits")
	case len(words) > store.MaxQueryWords:
		return nil, Invalid("the query has %d words: give at most %d", len(words), store.MaxQueryWords)
	}
	return words, nil
}

// Resealed checks what a Reseal's fn returned for a document of kind
// (store.Resealer's rules); before is the stored document.
func Resealed(kind store.DocKind, hash string, before, after []byte) error {
	what := string(kind)
	switch kind {
	case store.DocMessage, store.DocBlob:
		if err := Body(what, hash, after); err != nil {
			return err
		}
		if kind == store.DocMessage && !slices.Equal(store.BodyWords(before), store.BodyWords(after)) {
			return Invalid("a resealed message %s has other search words than the stored one: a reseal may not change what a search finds", hash)
		}
		return nil
	}
	return JSON(what, after)
}
