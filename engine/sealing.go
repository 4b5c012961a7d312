package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"rewind/engine/internal/sealstore"
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

// SealStore is st as an engine of g with keys reads and writes it
// (engine/internal/sealstore): what Sensitive marks sealed on the way in when keys
// seal, and every sealed document opened on the way out. st itself when
// g marks nothing and keys is nil (nothing to seal, and nothing sealed to
// name).
func SealStore(st store.Store, g *Graph, keys *seal.Keys) store.Store {
	if _, done := st.(*sealstore.Store); done || (len(g.sensitive) == 0 && keys == nil) {
		return st
	}
	return sealstore.New(st, keys, len(g.sensitive) > 0, slices.Contains(g.sensitive, g.schema.TranscriptOr("")))
}

// raw is the engine's store beneath the sealing wrapper: what it can do
// besides store.Store (watch, name a lock's holder) is asked of it, since
// the wrapper has every such method whether or not the store has it.
func (e *Engine) raw() store.Store {
	if s, ok := e.store.(*sealstore.Store); ok {
		return s.Store
	}
	return e.store
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
	s, ok := e.store.(*sealstore.Store)
	if !ok {
		return Rekeyed{}, errors.New("rekey needs a graph that marks channels sensitive")
	}
	if _, ok := s.Store.(store.Resealer); !ok {
		return Rekeyed{}, sealstore.ErrNoReseal
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
	release, _, err := e.lockFor(ctx, thread, takeOver, false)
	if err != nil {
		return Rekeyed{}, err
	}
	defer func() { err = released(err, release) }()
	out := Rekeyed{Resealed: map[string]int{}, KeyID: newID}
	_, err = s.Reseal(ctx, thread, func(_ store.DocKind, hash string, doc []byte) ([]byte, error) {
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
