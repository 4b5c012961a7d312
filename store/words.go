package store

import (
	"encoding/json"
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
// ones in the order the body holds them.
const (
	MaxWordBytes = 100
	MaxWords     = 8000
	// MaxQueryWords is how many words a query may have (Store.Search
	// refuses more with ErrInvalid).
	MaxQueryWords = 32
)

// wordRune says whether r belongs to a word (FTS5's unicode61 token
// characters: L*, N*, Co).
func wordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || r >= 0xE000 && unicode.Is(unicode.Co, r)
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
// values (not its keys), in the order they appear, at most MaxWords. It
// scans the bytes (a put checked them to be JSON): it runs in every put
// of a message (0.15 of a turn's index cost was encoding/json's). A sealed
// body (SealedHash) has none: its words are ciphertext.
func BodyWords(body []byte) []string {
	if _, sealed := SealedHash(body); sealed {
		return nil
	}
	var w words
	for i := 0; i < len(body); {
		if body[i] != '"' {
			i++
			continue
		}
		j, escaped := i+1, false
		for j < len(body) && body[j] != '"' {
			if body[j] == '\\' {
				escaped = true
				j++
			}
			j++
		}
		if j >= len(body) {
			break // not JSON
		}
		raw := body[i : j+1]
		i = j + 1
		k := i
		for k < len(body) && (body[k] == ' ' || body[k] == '\t' || body[k] == '\n' || body[k] == '\r') {
			k++
		}
		if k < len(body) && body[k] == ':' {
			continue // a key
		}
		var s string
		if !escaped {
			s = string(raw[1 : len(raw)-1])
		} else if json.Unmarshal(raw, &s) != nil {
			continue
		}
		if !w.add(s) {
			break
		}
	}
	return w.out
}

// words gathers BodyWords' distinct words.
type words struct {
	out  []string
	seen map[string]bool // past a few words; before, out is searched
}

// add adds the words of a string value; false once MaxWords are in.
func (w *words) add(s string) bool {
	for span := range wordSpans(s) {
		word := cutWord(strings.ToLower(s[span[0]:span[1]]))
		if w.seen != nil {
			if w.seen[word] {
				continue
			}
			w.seen[word] = true
		} else if slices.Contains(w.out, word) {
			continue
		}
		if len(w.out) == MaxWords {
			return false
		}
		w.out = append(w.out, word)
		if w.seen == nil && len(w.out) == 32 {
			w.seen = make(map[string]bool, 64)
			for _, o := range w.out {
				w.seen[o] = true
			}
		}
	}
	return true
}

// SearchQuery is a query's words, each once, in order: Store.Search
// finds a message that has, for each of them, a word it begins. A query
// with none, or with more than MaxQueryWords, is ErrInvalid.
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
