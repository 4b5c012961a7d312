package tui

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"rewind/store/browse"
	"rewind/tui/termtext"
)

// What the panes show of a checkpoint a read-only source gives (a
// LangGraph database: detail.src): the conversation when the state holds
// a message list, else its channels as JSON; the channels in the State
// pane; its listing and the writes of the superstep from it in the
// inspector.

// stateOf is the State pane's lines for d, of either kind.
func (r *renderer) stateOf(d *detail, w int, unfold bool) []string {
	if d != nil && d.src != nil {
		return r.sourceState(d.src, w, unfold)
	}
	return r.state(d, w, unfold)
}

// inspectorOf is the inspector's lines for d, of either kind.
func (r *renderer) inspectorOf(d *detail, w int, unfold bool) []string {
	if d != nil && d.src != nil {
		return r.sourceInspector(d.src, w)
	}
	return r.inspector(d, w, unfold)
}

// hasConversation is whether cp's messages channel holds LangChain
// messages.
func hasConversation(cp browse.Checkpoint) bool {
	v, ok := cp.Value("messages")
	if !ok {
		return false
	}
	_, ok = browse.Messages(v)
	return ok
}

func (r *renderer) sourceConversation(sd *sourceDetail, w int, unfold bool) []string {
	if hasConversation(sd.cp) {
		return convLines(r.theme, sd.cp, w)
	}
	head := r.theme.Muted.Render("no message list at this checkpoint: its channels, as JSON")
	return append([]string{head, ""}, r.sourceState(sd, w, unfold)...)
}

// sourceState is the graph's channels (not LangGraph's bookkeeping ones),
// each as JSON under its name.
func (r *renderer) sourceState(sd *sourceDetail, w int, unfold bool) []string {
	th := r.theme
	var out []string
	if sd.cp.Damaged != "" {
		out = append(out, wrapStyled(th.Error, "read in part: "+termtext.Line(sd.cp.Damaged), w)...)
	}
	if sd.cp.Stored != nil {
		out = append(out, wrapStyled(th.Muted, "shown with the stored pending writes applied, as LangGraph's get_state shows it", w)...)
	}
	state := sd.cp.State()
	names := slices.Sorted(maps.Keys(state))
	if len(names) == 0 {
		return append(out, th.Muted.Render("no channel holds a value at this checkpoint"))
	}
	for _, name := range names {
		raw := state[name]
		label := th.Strong.Render(" "+termtext.Line(name)) + th.Muted.Render(" = ")
		if len(raw) == 0 || raw[0] != '[' && raw[0] != '{' { // a plain value: on its line, as rewind show prints it
			out = append(out, label+th.Text.Render(termtext.Line(string(raw))))
			continue
		}
		out = append(out, label)
		out = append(out, r.json(raw, w, "   ", unfold)...)
	}
	return out
}

// sourceInspector is the checkpoint's listing, then the writes of its
// superstep.
func (r *renderer) sourceInspector(sd *sourceDetail, w int) []string {
	th := r.theme
	cp := sd.cp
	out := []string{th.Heading.Render("Checkpoint @"+lgShortID(cp.ID)) +
		th.Muted.Render(fmt.Sprintf("  step %d · %s", cp.Step, termtext.Line(cp.Source)))}
	kv := func(k, v string) {
		for i, l := range wrap(v, max(w-11, 8)) {
			label := "           "
			if i == 0 {
				label = fmt.Sprintf("  %-8s ", k)
			}
			out = append(out, th.Muted.Render(label)+th.Text.Render(l))
		}
	}
	kv("id", termtext.Line(cp.ID))
	if cp.Parent != "" {
		kv("parent", "@"+lgShortID(cp.Parent))
	}
	if !cp.CreatedAt.IsZero() {
		kv("created", cp.CreatedAt.UTC().Format("2006-01-02 15:04:05"))
	}
	if len(cp.WrittenBy) > 0 {
		kv("wrote", termtext.Line(strings.Join(cp.WrittenBy, ", ")))
	}
	kv("next", describeNext(cp.Next))
	out = append(out, "", th.Heading.Render("Writes of the superstep from here"))
	return append(out, writesLines(th, sd.writes, w)...)
}
