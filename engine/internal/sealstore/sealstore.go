// Package sealstore is encryption at rest as a store wrapper: a
// store.Store whose documents that may hold a sensitive channel's value
// (state documents, head snapshots, rebases, blobs, task writes, drafts,
// the transcript's message bodies) are sealed with engine/seal on their
// way in and opened on their way out. Listings and events pass in the
// clear. The engine decides what to seal (engine.SealStore, from the
// graph's Sensitive channels) and wraps its store in a Store; the stored
// format never sees an envelope.
//
// Like store.Tenanted, the wrapper forwards every optional store
// interface (Drafts, Watcher, Erasing, Resealer, LockHolders, the tests'
// SetTxHook) to what it wraps, with its own rule applied
// (TestForwardsEveryOptionalInterface).
package sealstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"rewind/engine/seal"
	"rewind/store"
)

// ErrNoReseal: the wrapped store cannot rewrite a thread's documents.
var ErrNoReseal = errors.New("this store cannot rewrite a thread's documents")

// New is st with keys: docs seals every document that may hold a
// sensitive value, msgs the transcript's message bodies too (both need
// keys to have a sealing key); whatever is sealed is opened with keys,
// which may be nil (nothing opens: a sealed document reads as a
// *seal.Error).
func New(st store.Store, keys *seal.Keys, docs, msgs bool) *Store {
	s := &Store{Store: st, keys: keys}
	if docs && keys.Sealing() != "" {
		s.docs = keys
		if msgs {
			s.msgs = keys
		}
	}
	return s
}

// Store is a store whose documents are sealed on their way in and opened
// on their way out. docs and msgs are nil when those are not sealed; keys
// opens.
type Store struct {
	store.Store
	keys       *seal.Keys
	docs, msgs *seal.Keys
}

// Unwrap is the store underneath.
func (s *Store) Unwrap() store.Store { return s.Store }

func (s *Store) open(doc []byte) ([]byte, error) {
	if !seal.Is(doc) {
		return doc, nil
	}
	return s.keys.Open(doc)
}

func (s *Store) sealRow(cp *store.Checkpoint) {
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

func (s *Store) openRow(cp *store.Checkpoint) (err error) {
	if cp.State, err = s.open(cp.State); err != nil {
		return err
	}
	if cp.Head, err = s.open(cp.Head); err != nil {
		return err
	}
	cp.Rebased, err = s.open(cp.Rebased)
	return err
}

func (s *Store) openMessages(ms []store.Message, err error) ([]store.Message, error) {
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

func (s *Store) openBlobs(bs []store.Blob) error {
	for i := range bs {
		var err error
		if bs[i].Body, err = s.open(bs[i].Body); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) PutCheckpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) error {
	if s.docs != nil {
		s.sealRow(&cp)
	}
	return s.Store.PutCheckpoint(ctx, cp, events)
}

func (s *Store) PutWrites(ctx context.Context, w store.TaskWrites) error {
	w.Writes = s.docs.Seal(w.Writes, "")
	return s.Store.PutWrites(ctx, w)
}

func (s *Store) Get(ctx context.Context, thread string, id int64) (store.Checkpoint, error) {
	cp, err := s.Store.Get(ctx, thread, id)
	if err == nil {
		err = s.openRow(&cp)
	}
	return cp, err
}

func (s *Store) Latest(ctx context.Context, thread string) (store.Checkpoint, error) {
	cp, err := s.Store.Latest(ctx, thread)
	if err == nil {
		err = s.openRow(&cp)
	}
	return cp, err
}

func (s *Store) History(ctx context.Context, thread string, before int64, limit int) ([]store.Checkpoint, error) {
	rows, err := s.Store.History(ctx, thread, before, limit)
	for i := range rows {
		if err != nil {
			break
		}
		err = s.openRow(&rows[i])
	}
	return rows, err
}

func (s *Store) Chain(ctx context.Context, thread string, id int64) ([]store.Checkpoint, error) {
	rows, err := s.Store.Chain(ctx, thread, id)
	for i := range rows {
		if err != nil {
			break
		}
		err = s.openRow(&rows[i])
	}
	return rows, err
}

func (s *Store) Messages(ctx context.Context, thread string, hashes []string) ([]store.Message, error) {
	return s.openMessages(s.Store.Messages(ctx, thread, hashes))
}

func (s *Store) MessagesAt(ctx context.Context, thread string, index int64) ([]store.Message, error) {
	return s.openMessages(s.Store.MessagesAt(ctx, thread, index))
}

func (s *Store) MessagesIn(ctx context.Context, thread string, from, to int64) ([]store.Message, error) {
	return s.openMessages(s.Store.MessagesIn(ctx, thread, from, to))
}

// Search finds in the index, and, when the thread's messages are sealed
// (their words are not indexed), in their plaintext, opened in this
// process only.
func (s *Store) Search(ctx context.Context, thread, query string, limit int) ([]store.Message, error) {
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

func (s *Store) Blobs(ctx context.Context, thread string, hashes []string) ([]store.Blob, error) {
	bs, err := s.Store.Blobs(ctx, thread, hashes)
	if err == nil {
		err = s.openBlobs(bs)
	}
	return bs, err
}

func (s *Store) Bodies(ctx context.Context, thread string, messages, blobs []string) ([]store.Message, []store.Blob, error) {
	ms, bs, err := s.Store.Bodies(ctx, thread, messages, blobs)
	if err == nil {
		ms, err = s.openMessages(ms, nil)
	}
	if err == nil {
		err = s.openBlobs(bs)
	}
	return ms, bs, err
}

func (s *Store) Writes(ctx context.Context, thread string, checkpointID int64) ([]store.TaskWrites, error) {
	ws, err := s.Store.Writes(ctx, thread, checkpointID)
	for i := range ws {
		if err != nil {
			break
		}
		ws[i].Writes, err = s.open(ws[i].Writes)
	}
	return ws, err
}

func (s *Store) Prune(ctx context.Context, thread string, ids []int64, rebase []store.Rebase) (store.PruneResult, error) {
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

func (s *Store) drafts() (store.Drafts, error) {
	d, ok := s.Store.(store.Drafts)
	if !ok {
		return nil, fmt.Errorf("this store keeps no drafts")
	}
	return d, nil
}

func (s *Store) CreateDraft(ctx context.Context, d store.Draft) (store.Draft, bool, error) {
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

func (s *Store) Draft(ctx context.Context, thread, operationID string) (store.Draft, error) {
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

func (s *Store) ListDrafts(ctx context.Context, thread string) ([]store.Draft, error) {
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

func (s *Store) Watch(ctx context.Context, thread string) (<-chan struct{}, error) {
	w, ok := s.Store.(store.Watcher)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return w.Watch(ctx, thread)
}

// CountSize counts the rows as stored (sealed), as Size does.
func (s *Store) CountSize(ctx context.Context, thread string) (int64, error) {
	c, ok := s.Store.(store.SizeCounter)
	if !ok {
		return 0, errors.ErrUnsupported
	}
	return c.CountSize(ctx, thread)
}

func (s *Store) LockHolder(ctx context.Context, thread string) (string, error) {
	if h, ok := s.Store.(store.LockHolders); ok {
		return h.LockHolder(ctx, thread)
	}
	return "", nil
}

// Reseal passes the thread's documents as stored (sealed or not) to fn:
// a rotation opens and seals them itself (Rekey).
func (s *Store) Reseal(ctx context.Context, thread string, fn func(kind store.DocKind, hash string, doc []byte) ([]byte, error)) (int, error) {
	rs, ok := s.Store.(store.Resealer)
	if !ok {
		return 0, ErrNoReseal
	}
	return rs.Reseal(ctx, thread, fn)
}

// Unerased is the store's, or "" for one that is not a store.Erasing
// (PostgreSQL: its server owns what its files keep).
func (s *Store) Unerased(ctx context.Context) (string, error) {
	if er, ok := s.Store.(store.Erasing); ok {
		return er.Unerased(ctx)
	}
	return "", nil
}

// SetTxHook passes the mid-transaction kill point to the store
// (engine/worker), which every store of rewind's takes.
func (s *Store) SetTxHook(hook func(stage string)) {
	if h, ok := s.Store.(interface{ SetTxHook(func(string)) }); ok {
		h.SetTxHook(hook)
	}
}

var (
	_ store.Drafts      = (*Store)(nil)
	_ store.Watcher     = (*Store)(nil)
	_ store.Erasing     = (*Store)(nil)
	_ store.Resealer    = (*Store)(nil)
	_ store.LockHolders = (*Store)(nil)
)
