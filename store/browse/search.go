package browse

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"rewind/store"
)

// Hit is a message that holds every word of a query, found in the
// messages of Checkpoint, the newest checkpoint of a branch (Head: the
// chain's newest).
type Hit struct {
	Checkpoint string
	Head       bool
	Message    Message
	// Speaker is the role, and the name a message gives itself.
	Speaker string
	// Text is the content, then each tool call's name and arguments;
	// Matches the byte spans of its words a query word begins
	// (store.Matches).
	Text    string
	Matches [][2]int
}

// Search finds chain c's messages that hold, for each word of query, a
// word that begins with it (store.SearchQuery, as rewind's full-text
// index matches). A source keeps no index, so it reads the messages of
// each branch's newest checkpoint, newest branch first, and lists a
// message several branches share once, on the newest (by id, else by
// place and text). It reads one whole checkpoint per branch; more says
// limit (> 0) cut the hits short. `rewind search` on a LangGraph database
// and the TUI's / both search this way.
func Search(ctx context.Context, src Source, c Chain, query string, limit int) (hits []Hit, more bool, err error) {
	h, err := src.History(ctx, c, "", 0)
	if err != nil {
		return nil, false, err
	}
	parents := map[string]bool{}
	for _, l := range h {
		parents[l.Parent] = true
	}
	words := store.SearchQuery(query)
	seen := map[string]bool{}
	for _, l := range h {
		if parents[l.ID] {
			continue // not a branch's newest
		}
		cp, err := src.Checkpoint(ctx, c, l.ID)
		if err != nil {
			return nil, false, err
		}
		for _, m := range cp.Messages() {
			hit, ok := match(m, words, seen)
			if !ok {
				continue
			}
			if limit > 0 && len(hits) == limit {
				return hits, true, nil
			}
			hit.Checkpoint, hit.Head = l.ID, l.ID == h[0].ID
			hits = append(hits, hit)
		}
	}
	return hits, false, nil
}

// match is message m as a hit when it holds every word and was not seen
// before; seen remembers it.
func match(m Message, words []string, seen map[string]bool) (Hit, bool) {
	key := "id:" + m.ID
	if m.ID == "" {
		key = fmt.Sprintf("%d:%s", m.Index, m.Content)
	}
	if seen[key] {
		return Hit{}, false
	}
	seen[key] = true
	speaker, text := Said(m)
	for _, w := range words {
		if len(store.Matches(text, []string{w})) == 0 {
			return Hit{}, false
		}
	}
	return Hit{Message: m, Speaker: speaker, Text: text, Matches: store.Matches(text, words)}, true
}

// Said is who said m, its role and the name it gives itself ("ai
// (writer)"), and what it says as a search reads it: its content, then
// each tool call's name and arguments.
func Said(m Message) (speaker, text string) {
	text = m.Content
	for _, tc := range m.ToolCalls {
		args, err := json.Marshal(tc.Args)
		if err != nil {
			args = []byte(fmt.Sprint(tc.Args))
		}
		text = strings.TrimSpace(text + " " + tc.Name + "(" + string(args) + ")")
	}
	speaker = m.Role
	if m.Name != "" {
		speaker += " (" + m.Name + ")"
	}
	return speaker, text
}

// Snippet is a line of text around its first match (matches: byte spans,
// in order), width bytes plus at most 3 on each edge, whitespace shown as spaces and "…" where
// it was cut, and the spans of the matches it shows, in the snippet's
// bytes.
func Snippet(text string, matches [][2]int, width int) (string, [][2]int) {
	from := 0
	if len(matches) > 0 {
		from = max(matches[0][0]-width/4, 0)
	}
	// To a character's start, at most 3 bytes away (a rune is at most 4):
	// past that the bytes are not UTF-8, and a run of continuation bytes
	// would otherwise widen the snippet to the whole run.
	for k := 0; k < utf8.UTFMax-1 && from > 0 && !utf8.RuneStart(text[from]); k++ {
		from--
	}
	to := min(from+width, len(text))
	for k := 0; k < utf8.UTFMax-1 && to < len(text) && !utf8.RuneStart(text[to]); k++ {
		to++
	}
	var b strings.Builder
	shift := -from
	if from > 0 {
		b.WriteString("…")
		shift += len("…")
	}
	// Byte by byte: a byte that is not UTF-8 stays one byte (a range over
	// runes would write U+FFFD's three and move every span after it).
	for i := from; i < to; i++ {
		c := text[i]
		if c == '\n' || c == '\t' || c == '\r' {
			c = ' ' // one byte for one: the spans hold
		}
		b.WriteByte(c)
	}
	if to < len(text) {
		b.WriteString("…")
	}
	var spans [][2]int
	for _, m := range matches {
		if m[0] >= from && m[1] <= to {
			spans = append(spans, [2]int{m[0] + shift, m[1] + shift})
		}
	}
	return b.String(), spans
}
