package memory

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"strings"

	"rewind/store"
	"rewind/store/internal/check"
)

// wordIndex is a thread's full-text index (Store.Search): each word of its
// messages (store.BodyWords) and the messages that hold it, the words
// sorted so that a query word finds the words it begins in one range.
type wordIndex struct {
	sorted []string            // distinct words, ascending
	hashes map[string][]string // word → hashes of the messages holding it
}

// index adds a new message's words, in its put.
func (th *thread) index(m store.Message) {
	ix := &th.words
	if ix.hashes == nil {
		ix.hashes = map[string][]string{}
	}
	for _, w := range store.BodyWords(m.Body) {
		if _, ok := ix.hashes[w]; !ok {
			at, _ := slices.BinarySearch(ix.sorted, w)
			ix.sorted = slices.Insert(ix.sorted, at, w)
		}
		ix.hashes[w] = append(ix.hashes[w], m.Hash)
	}
}

// find are the hashes of the messages with a word beginning with each of
// query's.
func (ix *wordIndex) find(query []string) map[string]bool {
	var found map[string]bool
	for _, q := range query {
		these := map[string]bool{}
		at, _ := slices.BinarySearch(ix.sorted, q)
		for _, w := range ix.sorted[at:] {
			if !strings.HasPrefix(w, q) {
				break
			}
			for _, h := range ix.hashes[w] {
				if found == nil || found[h] {
					these[h] = true
				}
			}
		}
		found = these
		if len(found) == 0 {
			break
		}
	}
	return found
}

// Search implements store.Store through the thread's wordIndex.
func (s *Store) Search(ctx context.Context, thread, query string, limit int) ([]store.Message, error) {
	return read(s, ctx, func() ([]store.Message, error) {
		words, err := check.Query(query)
		if err != nil {
			return nil, err
		}
		th := s.threads[thread]
		if th == nil {
			return nil, nil
		}
		var out []store.Message
		for h := range th.words.find(words) {
			m := th.messages[h]
			m.Body = bytes.Clone(m.Body)
			out = append(out, m)
		}
		slices.SortFunc(out, func(a, b store.Message) int {
			return cmp.Or(cmp.Compare(a.Index, b.Index), cmp.Compare(a.CheckpointID, b.CheckpointID), strings.Compare(a.Hash, b.Hash))
		})
		if limit > 0 && len(out) > limit {
			out = out[:limit]
		}
		return out, nil
	}, "search thread %v", check.Name(thread))
}
