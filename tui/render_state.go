package tui

// state is the State pane of a checkpoint of the rewind store: the
// extension's when the graph has one, else every channel by its shape.
func (r *renderer) state(d *detail, w int, unfold bool) []string {
	switch {
	case d == nil:
		return []string{r.theme.Muted.Render("loading…")}
	case d.ext != nil:
		if lines := d.ext.State(r.shown(d, w, unfold)); lines != nil {
			return lines
		}
	}
	return r.shapeState(d, w, unfold)
}
