package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/tui/termtext"
)

// toastRow is about where PostgreSQL starts moving a row's documents out
// of line (TOAST_TUPLE_THRESHOLD, 2 KB): each access then costs one more
// read.
const toastRow = 2032

func sizeText(n int) string {
	if n < 10_000 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1000)
}

// costsHeader is the thread's tokens above the inspector: the total
// (every branch, each call once) and the last turn's by role. Nothing
// before they are loaded.
func (r *renderer) costsHeader(c *engine.Costs, w int) []string {
	if c == nil {
		return nil
	}
	th := r.theme
	out := []string{th.Muted.Render("thread tokens ") + th.Text.Render(fmt.Sprintf("%s in · %s out", termtext.Count(c.Total.PromptTokens), termtext.Count(c.Total.CompletionTokens)))}
	if t := c.LastTurn; t != nil {
		roles := make([]string, 0, len(t.Roles))
		for role := range t.Roles {
			roles = append(roles, role)
		}
		sort.Slice(roles, func(i, j int) bool { return roleRank(roles[i]) < roleRank(roles[j]) })
		parts := make([]string, len(roles))
		for i, role := range roles {
			u := t.Roles[role]
			parts[i] = fmt.Sprintf("%s %s/%s", termtext.Line(role), termtext.Count(u.PromptTokens), termtext.Count(u.CompletionTokens))
		}
		line := fmt.Sprintf("last turn @%d: %s in · %s out", t.Start, termtext.Count(t.Total.PromptTokens), termtext.Count(t.Total.CompletionTokens))
		if len(parts) > 0 {
			line += " (" + strings.Join(parts, ", ") + ")"
		}
		for _, l := range wrap(line, max(w-2, 8)) {
			out = append(out, th.Muted.Render(l))
		}
	}
	return append(out, "")
}

// roleRank orders roles as a turn calls them.
func roleRank(role string) string {
	for i, r := range []string{model.RolePlanner, model.RoleExecutor, model.RoleCritic, model.RoleSummarizer, model.RoleReply} {
		if r == role {
			return fmt.Sprint(i)
		}
	}
	return "9" + role
}

// inspectorOrigin gives kv where d's checkpoint comes from: its parent,
// when it was stored, the run that wrote it.
func inspectorOrigin(d *detail, kv func(k, v string)) {
	cp := d.cp
	if cp.ParentID != 0 {
		kv("parent", fmt.Sprintf("@%d", cp.ParentID))
	} else {
		kv("parent", "none (root)")
	}
	if !cp.CreatedAt.IsZero() {
		kv("created", cp.CreatedAt.Local().Format("2006-01-02 15:04:05"))
	}
	if d.run != nil {
		kv("run", termtext.Line(strings.TrimPrefix(d.run.Text(), "run ")))
	}
}

// inspector renders a checkpoint's metadata, its pending tasks with their
// full arguments, the stored writes of the superstep that runs from it, the
// diff against its parent and the events committed with it.
func (r *renderer) inspector(d *detail, w int, unfold bool) []string {
	th := r.theme
	if d == nil {
		return []string{th.Muted.Render("loading…")}
	}
	cp := d.cp
	var out []string
	add := func(ls ...string) { out = append(out, ls...) }
	kv := func(k, v string) {
		lines := wrap(v, max(w-11, 8))
		for i, l := range lines {
			label := "           "
			if i == 0 {
				label = fmt.Sprintf("  %-8s ", k) // "migrated" fills the column
			}
			add(th.Muted.Render(label) + th.Text.Render(l))
		}
	}

	add(th.Heading.Render(fmt.Sprintf("Checkpoint @%d", cp.ID)) + th.Muted.Render(fmt.Sprintf("  step %d · %s · schema v%d", cp.Step, termtext.Line(cp.Source), cp.SchemaVersion)))
	inspectorOrigin(d, kv)
	md := cp.Metadata
	if len(md.Writes) > 0 {
		nodes := slices.Sorted(maps.Keys(md.Writes))
		for _, n := range nodes {
			kv("wrote", n+" → "+strings.Join(md.Writes[n], ", "))
		}
	}
	if len(md.ModelCalls) > 0 {
		kv("calls", model.Counts(md.ModelCalls).String())
	}
	if u := md.Usage; u != nil {
		kv("tokens", fmt.Sprintf("%s in · %s out", termtext.Count(u.PromptTokens), termtext.Count(u.CompletionTokens)))
	}
	if md.DurationMs > 0 {
		kv("took", fmt.Sprintf("%d ms", md.DurationMs))
	}
	if cp.Bytes > 0 {
		kv("stored", fmt.Sprintf("%s (row %s; the rest: new messages and large values)", sizeText(cp.Bytes), sizeText(cp.RowBytes)))
		if cp.RowBytes > toastRow {
			add(th.Warning.Render(trunc("  ⚠ row over ~2 KB: PostgreSQL keeps it out of line (TOAST), one more read each time", w)))
		}
	}
	if len(md.Reused) > 0 {
		kv("reused", strings.Join(md.Reused, ", ")+" (stored writes used, not run again)")
	}
	if md.ForkedFrom != 0 {
		kv("forked", fmt.Sprintf("from @%d", md.ForkedFrom))
	}
	if len(md.Discarded) > 0 {
		kv("dropped", plural(len(md.Discarded), "pending task", "pending tasks")+": "+engine.DescribeTasks(md.Discarded))
	}
	if md.AsNode != "" {
		kv("as node", md.AsNode)
	}
	if md.Interrupt != nil {
		add(th.Paused.Render(trunc(termtext.Line(fmt.Sprintf("  ⏸ interrupted %s %s", md.Interrupt.When, md.Interrupt.Node)), w)))
	}
	if cp.MigratedFrom != 0 {
		kv("migrated", fmt.Sprintf("read from schema v%d", cp.MigratedFrom))
	}
	add("")

	add(th.Heading.Render(fmt.Sprintf("Pending tasks (%d)", len(cp.Tasks))))
	if len(cp.Tasks) == 0 {
		add(th.Muted.Render("  none: nothing runs after this checkpoint"))
	}
	for _, t := range cp.Tasks {
		add(trunc("  ▸ "+th.Strong.Render(termtext.Line(t.Node))+" "+th.Muted.Render(termtext.Name(t.ID)), w))
		if len(t.Args) > 0 {
			add(r.json(t.Args, w, "    ", unfold)...)
		}
	}
	if len(d.writes) > 0 {
		add("")
		add(th.Heading.Render(fmt.Sprintf("Stored writes of the next superstep (%d/%d tasks done)", len(d.writes), len(cp.Tasks))))
		for _, tw := range d.writes {
			chs := make([]string, 0, len(tw.Writes))
			for _, x := range tw.Writes {
				chs = append(chs, x.Channel)
			}
			line := fmt.Sprintf("  ✓ %s %s → %s", termtext.Name(tw.Task), termtext.Line(tw.Node), strings.Join(chs, ", "))
			if n := model.Counts(tw.ModelCalls).Sum(); n > 0 {
				line += " · " + plural(n, "model call", "model calls")
			}
			for _, l := range wrap(line, w) {
				add(th.Success.Render(l))
			}
		}
	}
	add("")

	if d.parent == nil {
		add(th.Heading.Render("Diff") + th.Muted.Render(" · root checkpoint: everything is new"))
	} else {
		add(th.Heading.Render(fmt.Sprintf("Diff against parent @%d", d.parent.ID)) + th.Muted.Render(" · "+plural(len(d.diff), "channel", "channels")+" changed"))
	}
	if len(d.diff) == 0 && d.parent != nil {
		add(th.Muted.Render("  no channel changed"))
	}
	add(r.diffLines(d.diff, w, unfold)...)
	add("")

	add(th.Heading.Render(fmt.Sprintf("Events (%d)", len(d.events))))
	if len(d.events) == 0 {
		add(th.Muted.Render("  none"))
	}
	for _, ev := range d.events {
		head := fmt.Sprintf("  %3d %s", ev.Seq, th.Accent.Render(termtext.Line(ev.Type)))
		if ev.Node != "" {
			head += " " + th.Strong.Render(termtext.Line(ev.Node))
		}
		if ev.Task != "" {
			head += " " + th.Muted.Render(termtext.Name(ev.Task))
		}
		if !ev.At.IsZero() {
			head += " " + th.Muted.Render(ev.At.Local().Format("15:04:05.000"))
		}
		add(trunc(head, w))
		if len(ev.Data) > 0 && string(ev.Data) != "null" {
			data := compactRaw(ev.Data)
			if !unfold {
				data, _ = clipRunes(data, 3*max(w-6, 10))
			}
			for _, l := range wrap(data, max(w-6, 8)) {
				add("      " + th.Muted.Render(l))
			}
		}
	}
	return out
}

// json pretty-prints raw JSON, sanitised and highlighted, under indent.
func (r *renderer) json(raw json.RawMessage, w int, indent string, unfold bool) []string {
	var buf bytes.Buffer
	text := string(raw)
	if json.Indent(&buf, raw, "", "  ") == nil {
		text = buf.String()
	}
	limit := maxRunesFolded
	if unfold {
		limit = maxRunesUnfolded
	}
	text, cut := clipRunes(text, limit)
	inner := max(w-width(indent), 8)
	var out []string
	for _, l := range r.hl.lines("json", termtext.Text(text)) {
		for _, wl := range wrapTokens(l, inner) {
			out = append(out, indent+wl)
		}
	}
	if cut > 0 {
		out = append(out, indent+r.theme.Fold.Render(fmt.Sprintf("… %d more characters · z unfolds", cut)))
	}
	return out
}

// diffLines renders channel diffs as a unified diff highlighted with
// chroma's diff lexer; long lines wrap with their +/- marker repeated so
// the colouring holds.
func (r *renderer) diffLines(diffs []engine.ChannelDiff, w int, unfold bool) []string {
	if len(diffs) == 0 {
		return nil
	}
	inner := max(w-4, 8)
	var b strings.Builder
	for _, cd := range diffs {
		fmt.Fprintf(&b, "@@ %s: %s\n", termtext.Line(cd.Channel), termtext.Line(cd.Summary))
		for _, l := range cd.Lines {
			if l == "" {
				continue
			}
			marker := l[:1]
			text := termtext.Line(l[1:])
			if !unfold {
				if cut, rest := clipRunes(text, 4*inner); rest > 0 {
					text = cut + "…"
				}
			}
			for _, wl := range wrapTokens(text, inner-1) {
				b.WriteString(marker + wl + "\n")
			}
		}
		if cd.More > 0 {
			fmt.Fprintf(&b, " … %d more line(s)\n", cd.More)
		}
	}
	lines := r.hl.lines("diff", b.String())
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return lines
}

func compactRaw(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}
