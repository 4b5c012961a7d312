package store

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What Store.Search finds. One tokenizer for every backend, so that they
// find the same messages: the memory store indexes its words, SQLite's
// FTS5 index is fed them (a function its trigger calls), PostgreSQL's
// tsvector is made from them (array_to_tsvector, no parser, no locale).

// A word is a run of Unicode letters, numbers and private-use characters,
// lowercased, cut at MaxWordBytes. A message's words are those of its
// body's JSON string values (not its keys), the first MaxWords distinct
// ones.
const (
	MaxWordBytes = 100
	MaxWords     = 8000
)

// wordRune says whether r belongs to a word (FTS5's unicode61 token
// characters: L*, N*, Co).
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// Words are the words of s, in order, repeats included.
func Words(s string) []string {
	var out []string
	for w := range wordSpans(s) {
		out = append(out, cutWord(strings.ToLower(s[w[0]:w[1]])))
	}
	return out
}

// wordSpans yields the byte spans of s's words.
func wordSpans(s string) func(yield func([2]int) bool) {
	return func(yield func([2]int) bool) {
		start := -1
		for i, r := range s {
			if wordRune(r) {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 {
				if !yield([2]int{start, i}) {
					return
				}
				start = -1
			}
		}
		if start >= 0 {
			yield([2]int{start, len(s)})
		}
	}
}

func cutWord(w string) string {
	if len(w) <= MaxWordBytes {
		return w
	}
	w = w[:MaxWordBytes]
	for len(w) > 0 && !utf8.ValidString(w) {
		w = w[:len(w)-1]
	}
	return w
}

// BodyWords are the distinct words of a message body's JSON string
// values, in the order they first appear, at most MaxWords. A body that
// is not JSON has none.
func BodyWords(body []byte) []string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			for _, w := range Words(v) {
				if !seen[w] {
					if len(out) == MaxWords {
						return false
					}
					seen[w] = true
					out = append(out, w)
				}
			}
		case []any:
			for _, e := range v {
				if !walk(e) {
					return false
				}
			}
		case map[string]any:
			// Keys in order, so that the words cut at MaxWords are the
			// same for every store.
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if !walk(v[k]) {
					return false
				}
			}
		}
		return true
	}
	walk(v)
	return out
}

// SearchQuery is a query's words, each once, in order: Store.Search
// finds a message that has, for each of them, a word it begins. A query
// with none is ErrInvalid.
func SearchQuery(q string) []string {
	var out []string
	for _, w := range Words(q) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// Matches are the byte spans of the words of text that begin with one of
// the query's words: what a search hit shows highlighted.
func Matches(text string, query []string) [][2]int {
	var out [][2]int
	for sp := range wordSpans(text) {
		w := cutWord(strings.ToLower(text[sp[0]:sp[1]]))
		for _, q := range query {
			if strings.HasPrefix(w, q) {
				out = append(out, sp)
				break
			}
		}
	}
	return out
}

// HasWords says whether words (a message's) hold a word beginning with
// each of query's: the rule every store's Search follows.
func HasWords(words, query []string) bool {
	for _, q := range query {
		found := false
		for _, w := range words {
			if strings.HasPrefix(w, q) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
