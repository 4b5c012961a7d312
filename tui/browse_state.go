package tui

// The browser's state pane: every channel of the checkpoint under the
// cursor as a collapsible, indented tree (maps by key, lists by index,
// typed objects by their class), opaque values with their stored type and
// size. LangGraph's internal channels are hidden, except __pregel_tasks,
// shown as the queued Sends. Only open nodes are walked, so a channel of
// 10,000 items costs one row until it is opened.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"rewind/store/browse"
	"rewind/themes"
	"rewind/tui/termtext"
)

type stateKeys struct {
	paneKeys
	Toggle key.Binding
}

func (k stateKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Toggle}
}
func (k stateKeys) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Toggle}}
}

// stateNode is one visible row of the tree.
type stateNode struct {
	path  string
	depth int
	label string
	// kids says the node opens (a non-empty map or list).
	kids bool
	text string
}

// browseState draws one checkpoint's channels as a tree.
type browseState struct {
	theme *themes.Theme
	keys  stateKeys
	cp    *browse.Checkpoint
	// open overrides a node's default (open above depth 1).
	open  map[string]bool
	rows  []stateNode
	cur   int
	top   int
	w, h  int
	cache string
	dirty bool
}

func newBrowseState(th *themes.Theme) *browseState {
	return &browseState{theme: th, keys: stateKeys{newPaneKeys(), bind("open/close a node", "enter", " ")}, open: map[string]bool{}, w: 40, h: 10, dirty: true}
}

// KeyMap is the pane's keys.
func (s *browseState) KeyMap() stateKeys { return s.keys }

// SetSize sets the pane's size.
func (s *browseState) SetSize(w, h int) { s.w, s.h, s.dirty = max(1, w), max(1, h), true }

// SetCheckpoint shows cp (nil: not read yet); which nodes are open is
// kept across checkpoints, by path.
func (s *browseState) SetCheckpoint(cp *browse.Checkpoint) {
	if s.cp == cp {
		return
	}
	var at string
	if s.cur < len(s.rows) {
		at = s.rows[s.cur].path
	}
	s.cp = cp
	s.build()
	if i := slices.IndexFunc(s.rows, func(n stateNode) bool { return n.path == at }); i >= 0 {
		s.cur = i
	} else {
		s.cur = min(s.cur, max(0, len(s.rows)-1))
	}
}

// Update moves the cursor and opens or closes the node under it.
func (s *browseState) Update(msg tea.Msg) bool {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false
	}
	switch {
	case key.Matches(k, s.keys.Up):
		s.cur--
	case key.Matches(k, s.keys.Down):
		s.cur++
	case key.Matches(k, s.keys.PageUp):
		s.cur -= s.h - 1
	case key.Matches(k, s.keys.PageDown):
		s.cur += s.h - 1
	case key.Matches(k, s.keys.Top):
		s.cur = 0
	case key.Matches(k, s.keys.Bottom):
		s.cur = len(s.rows) - 1
	case key.Matches(k, s.keys.Toggle):
		if s.cur < len(s.rows) && s.rows[s.cur].kids {
			n := s.rows[s.cur]
			s.open[n.path] = !s.isOpen(n.path, n.depth)
			s.build()
		}
	default:
		return false
	}
	s.cur = max(0, min(s.cur, len(s.rows)-1))
	s.dirty = true
	return true
}

func (s *browseState) isOpen(path string, depth int) bool {
	if o, ok := s.open[path]; ok {
		return o
	}
	return depth < 1
}

// build walks the open nodes.
func (s *browseState) build() {
	s.dirty = true
	s.rows = s.rows[:0]
	if s.cp == nil {
		return
	}
	hidden := 0
	for _, ch := range s.cp.Channels {
		if ch.Internal {
			hidden++
			continue
		}
		s.walk(ch.Name, termtext.Line(ch.Name), ch.Value, 0)
	}
	// The queue is what __pregel_tasks holds: the stored due tasks when
	// finished ones left Next (pending writes applied, as get_state).
	queue := s.cp.Next
	if st := s.cp.Stored; st != nil && st.Next != nil {
		queue = st.Next
	}
	var sends []browse.Task
	for _, t := range queue {
		if t.Send {
			sends = append(sends, t)
		}
	}
	if len(sends) > 0 {
		path := "\x00sends"
		open := s.isOpen(path, 0)
		s.rows = append(s.rows, stateNode{path: path, label: "queued Sends (__pregel_tasks)", kids: true, text: fmt.Sprintf("%d", len(sends))})
		if open {
			for i, t := range sends {
				s.walk(path+"/"+strconv.Itoa(i), "Send → "+termtext.Name(t.Node), t.Arg, 1)
			}
		}
	}
	if st := s.cp.Stored; st != nil && len(st.Channels) > 0 {
		path := "\x00stored"
		s.rows = append(s.rows, stateNode{path: path, label: "as stored (pending writes applied above)", kids: true, text: fmt.Sprintf("%d", len(st.Channels))})
		if s.isOpen(path, 0) {
			for _, ch := range st.Channels {
				if !ch.Held {
					s.rows = append(s.rows, stateNode{path: path + "/" + ch.Name, depth: 1, label: termtext.Line(ch.Name), text: "no value"})
					continue
				}
				s.walk(path+"/"+ch.Name, termtext.Line(ch.Name), ch.Value, 1)
			}
		}
	}
	if hidden > 0 {
		s.rows = append(s.rows, stateNode{path: "\x00hidden", label: fmt.Sprintf("(%d internal channel(s) hidden)", hidden)})
	}
}

// walk adds the node for v and, when open, its children.
func (s *browseState) walk(path, label string, v any, depth int) {
	n := stateNode{path: path, depth: depth, label: label}
	keys, items, typ := children(v)
	n.kids = len(keys)+len(items) > 0
	n.text = summary(v, typ, len(keys)+len(items))
	s.rows = append(s.rows, n)
	if !n.kids || !s.isOpen(path, depth) || depth > 64 {
		return
	}
	m, _ := v.(map[string]any)
	for _, k := range keys {
		s.walk(path+"/"+k, termtext.Line(k), m[k], depth+1)
	}
	for i, it := range items {
		s.walk(path+"/"+strconv.Itoa(i), fmt.Sprintf("[%d]", i), it, depth+1)
	}
}

// children are a map's keys (the markers of a decoded value left out) or
// a list's items, and a typed object's class.
func children(v any) (keys []string, items []any, typ string) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["$opaque"]; ok {
			return nil, nil, ""
		}
		typ, _ = x[browse.KeyType].(string)
		if _, ok := x["$value"]; ok && typ != "" {
			return nil, nil, typ
		}
		for k := range x {
			if typ != "" && isMarker(k) {
				continue
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return keys, nil, typ
	case []any:
		return nil, x, ""
	}
	return nil, nil, ""
}

// isMarker: a decoded value's marker ("$type", "$value", …); a stored key
// that starts with "$" reads with one more ("$$type"), and shows.
func isMarker(k string) bool { return strings.HasPrefix(k, "$") && !strings.HasPrefix(k, "$$") }

// summary is what a node's row says after its label.
func summary(v any, typ string, n int) string {
	short := typ[strings.LastIndex(typ, ".")+1:]
	switch x := v.(type) {
	case map[string]any:
		if o, ok := x["$opaque"]; ok {
			s := fmt.Sprintf("‹opaque %v, %v bytes›", o, x["$size"])
			if e, ok := x["$error"]; ok {
				s += fmt.Sprintf(" %v", e)
			}
			return termtext.Line(s)
		}
		if val, ok := x["$value"]; ok && typ != "" {
			return termtext.Line(short + " " + oneLine(val))
		}
		if typ != "" && n == 0 {
			return termtext.Line(short) // JavaScript's undefined, a class without fields
		}
		if typ != "" {
			return termtext.Line(fmt.Sprintf("%s {%d}", short, n))
		}
		return fmt.Sprintf("{%d}", n)
	case []any:
		return fmt.Sprintf("[%d]", n)
	case string:
		b, _ := json.Marshal(x)
		return termtext.Line(string(b))
	}
	return oneLine(v)
}

// View draws the rows around the cursor.
func (s *browseState) View() string {
	if !s.dirty {
		return s.cache
	}
	s.dirty = false
	if s.cp == nil {
		s.cache = s.theme.Muted.Render("reading…")
		return s.cache
	}
	if len(s.rows) == 0 {
		s.cache = s.theme.Muted.Render("no channels hold a value at this checkpoint")
		return s.cache
	}
	s.top = max(0, min(s.top, s.cur))
	if s.cur >= s.top+s.h {
		s.top = s.cur - s.h + 1
	}
	var out []string
	for i := s.top; i < len(s.rows) && len(out) < s.h; i++ {
		n := s.rows[i]
		mark := "  "
		if n.kids {
			mark = "▸ "
			if s.isOpen(n.path, n.depth) {
				mark = "▾ "
			}
		}
		label := n.label
		if n.depth == 0 {
			label = s.theme.Strong.Render(label)
		}
		line := strings.Repeat("  ", n.depth) + mark + label
		if n.text != "" {
			line += " " + s.theme.Muted.Render("=") + " " + n.text
		}
		line = ansi.Truncate(line, s.w-1, "…")
		if i == s.cur {
			line = s.theme.Cursor.Render("›") + line
		} else {
			line = " " + line
		}
		out = append(out, line)
	}
	s.cache = strings.Join(out, "\n")
	return s.cache
}
