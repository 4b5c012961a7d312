package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"rewind/engine/seal"
	"rewind/store"
)

// Sensitive marks channels whose values are encrypted at rest when the
// engine has a key (WithKeys): the transcript channel's message bodies,
// and every document that may hold a value of one of them (the rows'
// state documents, head snapshots and rebases, blobs, task writes,
// drafts). Listings and events stay in the clear, so a reader without the
// key still lists a thread's checkpoints, runs and events.
func (g *Graph) Sensitive(channels ...string) *Graph {
	for _, ch := range channels {
		if !slices.Contains(g.schema.Channels(), ch) {
			return g.fail("Sensitive(%q): no such channel; declare it first", ch)
		}
		if !slices.Contains(g.sensitive, ch) {
			g.sensitive = append(g.sensitive, ch)
		}
	}
	return g
}

// Channels are the graph's channels, in the order they were declared.
func (g *Graph) Channels() []string { return slices.Clone(g.schema.Channels()) }

// SensitiveChannels are the channels Sensitive marked, in its order.
func (g *Graph) SensitiveChannels() []string { return slices.Clone(g.sensitive) }

// WithKeys gives the engine its keys: it seals the sensitive channels'
// stored bytes with keys' sealing key and opens what any of them sealed.
// Without it, what an earlier run sealed reads as a *seal.Error.
func WithKeys(keys *seal.Keys) Option { return func(e *Engine) { e.keys = keys } }

// Sealed is what a thread's stored documents hold that needs a key: the
// sensitive channels, and the id of the key that sealed them.
type Sealed struct {
	Channels []string
	KeyID    string
	// Given are the ids of the keys the engine has, none of which opens
	// them ("" when it has none: the reader was not given the key, rather
	// than given a wrong one).
	Given string
}

// Text says it, naming the fix: "messages, summary are encrypted (key id
// k1); give --key-file to read them".
func (s Sealed) Text() string {
	verb := "are"
	if len(s.Channels) == 1 {
		verb = "is"
	}
	return fmt.Sprintf("%s %s encrypted (key id %s); give --key-file to read them", strings.Join(s.Channels, ", "), verb, s.KeyID)
}

// SealedBy tells, from err, what a read could not open for want of a key:
// ok is false when err is not a sealed document's.
func (e *Engine) SealedBy(err error) (Sealed, bool) {
	se, ok := asSealError(err)
	if !ok {
		return Sealed{}, false
	}
	chs := e.graph.SensitiveChannels()
	if len(chs) == 0 {
		chs = []string{"the checkpoints"}
	}
	return Sealed{Channels: chs, KeyID: se.KeyID, Given: se.Have}, true
}

func asSealError(err error) (*seal.Error, bool) {
	for err != nil {
		if se, ok := err.(*seal.Error); ok {
			return se, true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if se, ok := asSealError(e); ok {
					return se, true
				}
			}
			return nil, false
		default:
			return nil, false
		}
	}
	return nil, false
}

// SealStore is st as an engine of g with keys reads and writes it: what
// Sensitive marks sealed on the way in when keys seal, and every sealed
// document opened on the way out. st itself when g marks nothing and
// keys is nil (nothing to seal, and nothing sealed to name).
func SealStore(st store.Store, g *Graph, keys *seal.Keys) store.Store {
	if _, done := st.(*sealing); done || (len(g.sensitive) == 0 && keys == nil) {
		return st
	}
	s := &sealing{Store: st, keys: keys}
	if keys.Sealing() != "" && len(g.sensitive) > 0 {
		s.docs = keys
		if slices.Contains(g.sensitive, g.schema.TranscriptOr("")) {
			s.msgs = keys
		}
	}
	return s
}

// raw is the engine's store beneath the sealing wrapper: what it can do
// besides store.Store (watch, name a lock's holder) is asked of it, since
// the wrapper has every such method whether or not the store has it.
func (e *Engine) raw() store.Store {
	if s, ok := e.store.(*sealing); ok {
		return s.Store
	}
	return e.store
}

// sealing is a store whose documents the engine seals and opens (see
// SealStore). docs and msgs are nil when those are not sealed; keys
// opens.
type sealing struct {
	store.Store
	keys       *seal.Keys
	docs, msgs *seal.Keys
}

// Unwrap is the store underneath.
func (s *sealing) Unwrap() store.Store { return s.Store }

func (s *sealing) open(doc []byte) ([]byte, error) {
	if !seal.Is(doc) {
		return doc, nil
	}
	return s.keys.Open(doc)
}

func (s *sealing) sealRow(cp *store.Checkpoint) {
	cp.State = s.docs.Seal(cp.State, "")
	cp.Head = s.docs.Seal(cp.Head, "")
	cp.Rebased = s.docs.Seal(cp.Rebased, "")
	if s.msgs != nil && len(cp.Messages) > 0 {
		ms := make([]store.Message, len(cp.Messages))
		for i, m := range cp.Messages {
			m.Body = s.msgs.Seal(m.Body, m.Hash)
			ms[i] = m
		}
		cp.Messages = ms
	}
	if s.docs != nil && len(cp.Blobs) > 0 {
		bs := make([]store.Blob, len(cp.Blobs))
		for i, b := range cp.Blobs {
			b.Body = s.docs.Seal(b.Body, b.Hash)
			bs[i] = b
		}
		cp.Blobs = bs
	}
}

func (s *sealing) openRow(cp *store.Checkpoint) (err error) {
	if cp.State, err = s.open(cp.State); err != nil {
		return err
	}
	if cp.Head, err = s.open(cp.Head); err != nil {
		return err
	}
	cp.Rebased, err = s.open(cp.Rebased)
	return err
}

func (s *sealing) openMessages(ms []store.Message, err error) ([]store.Message, error) {
	if err != nil {
		return ms, err
	}
	for i := range ms {
		if ms[i].Body, err = s.open(ms[i].Body); err != nil {
			return nil, err
		}
	}
	return ms, nil
}

func (s *sealing) openBlobs(bs []store.Blob) error {
	for i := range bs {
		var err error
		if bs[i].Body, err = s.open(bs[i].Body); err != nil {
			return err
		}
	}
	return nil
}

func (s *sealing) PutCheckpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) error {
	if s.docs != nil {
		s.sealRow(&cp)
	}
	return s.Store.PutCheckpoint(ctx, cp, events)
}

func (s *sealing) PutWrites(ctx context.Context, w store.TaskWrites) error {
	w.Writes = s.docs.Seal(w.Writes, "")
	return s.Store.PutWrites(ctx, w)
}

func (s *sealing) Get(ctx context.Context, thread string, id int64) (store.Checkpoint, error) {
	cp, err := s.Store.Get(ctx, thread, id)
	if err == nil {
		err = s.openRow(&cp)
	}
	return cp, err
}

func (s *sealing) Latest(ctx context.Context, thread string) (store.Checkpoint, error) {
	cp, err := s.Store.Latest(ctx, thread)
	if err == nil {
		err = s.openRow(&cp)
	}
	return cp, err
}

func (s *sealing) History(ctx context.Context, thread string, before int64, limit int) ([]store.Checkpoint, error) {
	rows, err := s.Store.History(ctx, thread, before, limit)
	for i := range rows {
		if err != nil {
			break
		}
		err = s.openRow(&rows[i])
	}
	return rows, err
}

func (s *sealing) Chain(ctx context.Context, thread string, id int64) ([]store.Checkpoint, error) {
	rows, err := s.Store.Chain(ctx, thread, id)
	for i := range rows {
		if err != nil {
			break
		}
		err = s.openRow(&rows[i])
	}
	return rows, err
}

func (s *sealing) Messages(ctx context.Context, thread string, hashes []string) ([]store.Message, error) {
	return s.openMessages(s.Store.Messages(ctx, thread, hashes))
}

func (s *sealing) MessagesAt(ctx context.Context, thread string, index int64) ([]store.Message, error) {
	return s.openMessages(s.Store.MessagesAt(ctx, thread, index))
}

func (s *sealing) MessagesIn(ctx context.Context, thread string, from, to int64) ([]store.Message, error) {
	return s.openMessages(s.Store.MessagesIn(ctx, thread, from, to))
}

// Search finds in the index, and, when the thread's messages are sealed
// (their words are not indexed), in their plaintext, opened in this
// process only.
func (s *sealing) Search(ctx context.Context, thread, query string, limit int) ([]store.Message, error) {
	found, err := s.openMessages(s.Store.Search(ctx, thread, query, limit))
	if err != nil || s.msgs == nil && s.keys == nil {
		return found, err
	}
	all, err := s.openMessages(s.Store.MessagesIn(ctx, thread, 0, 1<<62))
	if err != nil {
		return nil, err
	}
	words := store.SearchQuery(query)
	var out []store.Message
	for _, m := range all {
		if matchesAll(store.BodyWords(m.Body), words) {
			out = append(out, m)
			if limit > 0 && len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

// matchesAll: every query word begins a word of the body (Store.Search's
// rule).
func matchesAll(body, query []string) bool {
	for _, q := range query {
		if !slices.ContainsFunc(body, func(w string) bool { return strings.HasPrefix(w, q) }) {
			return false
		}
	}
	return true
}

func (s *sealing) Blobs(ctx context.Context, thread string, hashes []string) ([]store.Blob, error) {
	bs, err := s.Store.Blobs(ctx, thread, hashes)
	if err == nil {
		err = s.openBlobs(bs)
	}
	return bs, err
}

func (s *sealing) Bodies(ctx context.Context, thread string, messages, blobs []string) ([]store.Message, []store.Blob, error) {
	ms, bs, err := s.Store.Bodies(ctx, thread, messages, blobs)
	if err == nil {
		ms, err = s.openMessages(ms, nil)
	}
	if err == nil {
		err = s.openBlobs(bs)
	}
	return ms, bs, err
}

func (s *sealing) Writes(ctx context.Context, thread string, checkpointID int64) ([]store.TaskWrites, error) {
	ws, err := s.Store.Writes(ctx, thread, checkpointID)
	for i := range ws {
		if err != nil {
			break
		}
		ws[i].Writes, err = s.open(ws[i].Writes)
	}
	return ws, err
}

func (s *sealing) Prune(ctx context.Context, thread string, ids []int64, rebase []store.Rebase) (store.PruneResult, error) {
	if s.docs != nil {
		rebase = slices.Clone(rebase)
		for i := range rebase {
			rebase[i].State = s.docs.Seal(rebase[i].State, "")
		}
	}
	return s.Store.Prune(ctx, thread, ids, rebase)
}

// The optional interfaces every store of rewind's has, passed through
// (drafts sealed like the documents).

func (s *sealing) drafts() (store.Drafts, error) {
	d, ok := s.Store.(store.Drafts)
	if !ok {
		return nil, fmt.Errorf("this store keeps no drafts")
	}
	return d, nil
}

func (s *sealing) CreateDraft(ctx context.Context, d store.Draft) (store.Draft, bool, error) {
	ds, err := s.drafts()
	if err != nil {
		return store.Draft{}, false, err
	}
	d.Body = s.docs.Seal(d.Body, "")
	got, created, err := ds.CreateDraft(ctx, d)
	if err == nil {
		got.Body, err = s.open(got.Body)
	}
	return got, created, err
}

func (s *sealing) Draft(ctx context.Context, thread, operationID string) (store.Draft, error) {
	ds, err := s.drafts()
	if err != nil {
		return store.Draft{}, err
	}
	d, err := ds.Draft(ctx, thread, operationID)
	if err == nil {
		d.Body, err = s.open(d.Body)
	}
	return d, err
}

func (s *sealing) ListDrafts(ctx context.Context, thread string) ([]store.Draft, error) {
	ds, err := s.drafts()
	if err != nil {
		return nil, err
	}
	list, err := ds.ListDrafts(ctx, thread)
	for i := range list {
		if err != nil {
			break
		}
		list[i].Body, err = s.open(list[i].Body)
	}
	return list, err
}

func (s *sealing) Watch(ctx context.Context, thread string) (<-chan struct{}, error) {
	w, ok := s.Store.(store.Watcher)
	if !ok {
		return nil, ErrNoWatch
	}
	return w.Watch(ctx, thread)
}

func (s *sealing) LockHolder(ctx context.Context, thread string) (string, error) {
	if h, ok := s.Store.(store.LockHolders); ok {
		return h.LockHolder(ctx, thread)
	}
	return "", nil
}

// Unerased is the store's, or "" for one that is not a store.Erasing
// (PostgreSQL: its server owns what its files keep).
func (s *sealing) Unerased(ctx context.Context) (string, error) {
	if er, ok := s.Store.(store.Erasing); ok {
		return er.Unerased(ctx)
	}
	return "", nil
}

// SetTxHook passes the mid-transaction kill point to the store
// (engine/worker), which every store of rewind's takes.
func (s *sealing) SetTxHook(hook func(stage string)) {
	if h, ok := s.Store.(interface{ SetTxHook(func(string)) }); ok {
		h.SetTxHook(hook)
	}
}

// Rekeyed is what a Rekey did: the documents it sealed again with the
// new key, by the key they had, and those it left in the clear (stored
// before the thread had a key).
type Rekeyed struct {
	Resealed map[string]int `json:"resealed"` // old key id → documents
	Clear    int            `json:"clear"`
	KeyID    string         `json:"keyId"`
}

// ErrNoNewKey is a Rekey by an engine given no key to seal with.
var ErrNoNewKey = errors.New("rekey needs the new key to seal with")

// Rekey seals every sealed document of thread again with the engine's
// sealing key, opening each with whichever of its keys sealed it (give
// the old key to WithKeys beside the new one), in one transaction of the
// store, as the thread's writer (its lock; a live run is refused, or,
// with takeOver, fenced out). A document none of the keys opens fails
// it with nothing written. Documents in the clear stay so: they are
// counted, not sealed (a reseal never changes what a search finds).
func (e *Engine) Rekey(ctx context.Context, thread string, takeOver bool) (_ Rekeyed, err error) {
	s, ok := e.store.(*sealing)
	if !ok {
		return Rekeyed{}, errors.New("rekey needs a graph that marks channels sensitive")
	}
	rs, ok := s.Store.(store.Resealer)
	if !ok {
		return Rekeyed{}, errors.New("this store cannot rewrite a thread's documents")
	}
	if _, err := s.Store.Latest(ctx, thread); errors.Is(err, store.ErrNotFound) {
		return Rekeyed{}, threadNotFound(thread)
	} else if err != nil {
		return Rekeyed{}, fmt.Errorf("rekey thread %q: %w", threadName(thread), err)
	}
	newID := e.keys.Sealing()
	if newID == "" {
		return Rekeyed{}, ErrNoNewKey
	}
	release, _, err := e.lockFor(ctx, thread, takeOver, "wait for it to finish, kill it, or take it over with --take-over", false)
	if err != nil {
		return Rekeyed{}, err
	}
	defer func() { err = released(err, release) }()
	out := Rekeyed{Resealed: map[string]int{}, KeyID: newID}
	_, err = rs.Reseal(ctx, thread, func(_ store.DocKind, hash string, doc []byte) ([]byte, error) {
		if !seal.Is(doc) {
			out.Clear++
			return doc, nil
		}
		plain, err := e.keys.Open(doc)
		if err != nil {
			return nil, err
		}
		out.Resealed[seal.KeyID(doc)]++
		return e.keys.Seal(plain, hash), nil
	})
	if err != nil {
		return Rekeyed{}, fmt.Errorf("rekey thread %q: %w", threadName(thread), err)
	}
	return out, nil
}
