package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"rewind/themes"
	"rewind/tui/termtext"
)

// Smallest screen drawn; below it a notice asks for more room.
const (
	minWidth  = 60
	minHeight = 12
	wideFrom  = 120
)

// layout is where everything goes for the current terminal size.
type layout struct {
	wide              bool
	bodyH             int
	tlW, mainW, sideW int
	paneInner         int
}

// computeLayout places the panes above the live area (liveH rows), the
// composer, the status bar and the key line.
func computeLayout(w, h, liveH int) layout {
	l := layout{bodyH: max(h-3-liveH, 3)}
	if w >= wideFrom {
		l.wide = true
		l.tlW = min(max(w*22/100, 30), 44)
	} else {
		l.tlW = min(max(w*34/100, 26), 38)
	}
	l.mainW, l.sideW = columns(w-l.tlW, l.wide)
	l.paneInner = max(l.bodyH-2, 0)
	return l
}

// columns splits the room right of the timeline: wide, the main column
// takes 55% and the side column the rest; narrow, the main column all.
func columns(rest int, wide bool) (mainW, sideW int) {
	if !wide {
		return rest, 0
	}
	mainW = rest * 55 / 100
	return mainW, rest - mainW
}

// liveThread is the thread the live strip shows: none off the thread view.
func (m *Model) liveThread() string {
	if m.screen != screenThread {
		return ""
	}
	return m.sess.thread
}

// refreshLive re-renders the live strip and relays out when its height
// changed.
func (m *Model) refreshLive() {
	before := m.live.Height()
	m.live.render(m.liveThread())
	if m.live.Height() != before {
		m.relayout()
	}
}

func (m *Model) relayout() {
	m.live.SetSize(m.w, m.h)
	m.live.render(m.liveThread())
	m.layout = computeLayout(m.w-m.script.shrinkBy(m.w), m.h, m.live.Height())
	l := m.layout
	// The conversation follows its end: keep it there when its height
	// changes (the live area comes and goes).
	convAtEnd := m.content.panes[paneConv].scroll.atBottom()
	defer func() {
		if convAtEnd {
			m.content.toEnd(paneConv)
		}
	}()
	m.content.setWide(l.wide)
	m.content.SetSize(l.mainW+l.sideW, l.bodyH)
	m.focus = m.content.refocus(m.focus)
	m.composer.SetSize(m.w, 1)
	m.nav.SetSize(m.w, 1)
	m.help.Width = m.w
	m.pager.SetSize(m.w, m.h)
	if m.dialog != nil {
		m.dialog.SetSize(dialogRoom(m.w, m.h))
	}
	m.threads.SetSize(m.w-2, max(m.h-4, 1))
	m.lessons.SetSize(m.w, max(m.h-2, 1))
	m.script.SetSize(m.w, l.bodyH)
	m.timeline.SetSize(l.tlW-2, l.paneInner)
	m.timeline.ensureVisible()
	m.syncPanes()
	m.zoomSizes()
}

// openDialog shows d over the screen, sized for it.
func (m *Model) openDialog(d dialog) {
	d.SetSize(dialogRoom(m.w, m.h))
	m.dialog = d
}

// View draws the screen from cached, pre-rendered lines.
func (m *Model) View() string {
	if m.w == 0 || m.h == 0 {
		return ""
	}
	if m.w < minWidth || m.h < minHeight {
		return m.painted.Paint(m.theme, fit(fmt.Sprintf("rewind needs at least %d×%d; this terminal is %d×%d", minWidth, minHeight, m.w, m.h), m.w), m.w, m.h)
	}
	var screen string
	if m.screen == screenThreads {
		screen = m.viewThreads()
	} else if m.screen == screenLessons {
		screen = m.viewLessons()
	} else {
		screen = m.viewThread()
	}
	switch {
	case m.pager.shown():
		screen = overlay(screen, m.viewPager(), m.w, m.h)
	case m.dialog != nil:
		screen = overlay(screen, m.dialog.View(m.theme, m.help), m.w, m.h)
	}
	// The theme's own background behind every cell: it reads the same on
	// a dark and a light terminal.
	return m.painted.Paint(m.theme, screen, m.w, m.h)
}

func (m *Model) viewThread() string {
	l := m.layout
	tl := strings.Split(frame(m.timeline.title(), m.timeline.View(), l.tlW, l.bodyH, m.focus == focusTimeline, m.border(m.focus == focusTimeline), m.theme.PaneTitle), "\n")
	main, side := m.visiblePanes()
	cols := [][]string{tl, strings.Split(m.framePane(main, l.mainW, m.focus == focusMain), "\n")}
	if l.wide {
		cols = append(cols, strings.Split(m.framePane(side, l.sideW, m.focus == focusSide), "\n"))
	}
	if m.nav.zoom {
		cols = m.zoomedCols()
	}
	rows := make([]string, l.bodyH)
	for row := range rows {
		for _, c := range cols {
			if row < len(c) {
				rows[row] += c[row]
			}
		}
	}
	var b strings.Builder
	for _, r := range m.script.draw(rows, m.w) {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	b.WriteString(m.live.View())
	b.WriteString(m.viewComposer())
	b.WriteByte('\n')
	b.WriteString(m.viewStatus())
	b.WriteByte('\n')
	b.WriteString(m.viewHelpLine())
	return b.String()
}

func (m *Model) border(focused bool) (s styleT) {
	if focused {
		return m.theme.BorderFocused
	}
	return m.theme.Border
}

func (m *Model) framePane(p, w int, focused bool) string {
	titleStyle := m.theme.PaneTitle
	if focused {
		titleStyle = m.theme.PaneTitleFocused
	}
	lines := m.content.View(p)
	if m.cur == nil && m.sess.thread != "" && !m.timeline.loading && m.timeline.tree.len() == 0 {
		// Nothing to load: say so rather than "loading…".
		lines = wrapStyled(m.theme.Muted, "No checkpoints on "+termtext.Name(m.sess.thread)+" yet: "+m.keys.Compose.Help().Key+" writes its first message.", max(w-2, 1))
	}
	if p == paneConv {
		lines = append(m.nav.convPins(m.cur, w-2, m.content.unfold), lines...)
	}
	return frame(m.paneTitle(p, focused), lines, w, m.layout.bodyH, focused, m.border(focused), titleStyle)
}

// paneTitle names the pane (as tabs when several share a column) and the
// checkpoint it shows.
func (m *Model) paneTitle(p int, focused bool) string {
	var tabs []int
	if m.layout.wide {
		if p == paneConv {
			tabs = []int{paneConv}
		} else {
			tabs = []int{paneState, paneInsp}
		}
	} else {
		tabs = []int{paneConv, paneState, paneInsp}
	}
	var parts []string
	for _, t := range tabs {
		name := fmt.Sprintf("%d %s", t+1, paneNames[t])
		if len(tabs) == 1 {
			parts = append(parts, name)
			continue
		}
		if t == p {
			parts = append(parts, m.theme.TabActive.Render("["+name+"]"))
		} else {
			parts = append(parts, m.theme.Tab.Render(name))
		}
	}
	title := strings.Join(parts, " ")
	if m.cur != nil {
		title += " · @" + m.timeline.tree.label(m.cur.id)
		if m.cur.id != m.timeline.tree.cursor && m.timeline.tree.cursor != "" {
			title += " (loading @" + m.timeline.tree.label(m.timeline.tree.cursor) + ")"
		}
	}
	if pct, ok := m.content.scrolled(p); ok {
		title += fmt.Sprintf(" · %d%%", pct)
	}
	return title
}

func wrapStyled(st styleT, text string, w int) []string {
	lines := wrap(text, w)
	for i, l := range lines {
		lines[i] = st.Render(l)
	}
	return lines
}

func (m *Model) viewComposer() string {
	if m.nav.prompting() {
		return m.nav.View()
	}
	if m.composer.open {
		return m.composer.View("")
	}
	if m.screen == screenThreads || m.sess.thread == "" {
		return fit("", m.w)
	}
	if m.sess.readOnly() {
		return m.composer.View(readOnlyWhy)
	}
	hint := "i: write a message"
	head := m.live.head
	if head != nil && (head.thread != m.sess.thread || head.id != m.timeline.tree.maxID) {
		head = nil
	}
	switch {
	case m.busy():
		hint = "a run is under way · x stops it"
		if m.runs.canKill() {
			hint += ", " + m.keys.Kill.Help().Key + " kills its worker"
		}
	case head != nil && head.gate != nil && m.timeline.leaf == head.id:
		hint = fmt.Sprintf("@%d waits for your approval of a draft: a answers · f forks at the cursor", head.cp.ID)
	case m.sess.noInput() != "" && head != nil && len(head.cp.Tasks) > 0 && m.timeline.leaf == head.id:
		hint = fmt.Sprintf("@%d has pending tasks: r resumes them, D discards them", head.cp.ID)
	case m.sess.noInput() != "":
		hint = m.sess.noInput()
	case head != nil && len(head.cp.Tasks) > 0 && m.timeline.leaf == head.id:
		hint = fmt.Sprintf("@%d has pending tasks: r resumes them, D discards them · f forks at the cursor", head.cp.ID)
	case m.timeline.tree.len() == 0:
		hint = "i: write the first message of " + termtext.Name(m.sess.thread)
	case m.timeline.leaf != "" && m.timeline.leaf != m.timeline.tree.maxID:
		hint = fmt.Sprintf("i: write a message (continues this branch from @%s) · f forks at the cursor", m.timeline.leaf)
	case m.timeline.leaf != "":
		hint = fmt.Sprintf("i: write a message (continues at @%s) · f forks at the cursor", m.timeline.leaf)
	}
	return m.composer.View(hint)
}

// viewStatus is the status bar: thread, position, branch, breakpoints and
// store on the left, the run's progress or a message on the right. When
// space is short the store goes first, then the breakpoints; the position
// always stays.
func (m *Model) viewStatus() string {
	th := m.theme
	sep := th.StatusLabel.Render(" │ ")
	seg := func(label, value string) string {
		return th.StatusLabel.Render(label+" ") + th.StatusValue.Render(value)
	}
	// The left side: the brand, the thread, the position, the branch and
	// an armed kill point. When the bar is short, the brand goes first,
	// then the branch, then the thread's name shrinks and goes (its
	// timeline is on screen): the position stays
	// (issue 33: at 60 columns it was cut off).
	leftOf := func(brand bool, name int, branch bool) []string {
		var parts []string
		if brand {
			parts = append(parts, th.StatusValue.Render(" rewind"))
		}
		if m.screen != screenThread || m.sess.thread == "" {
			return parts
		}
		label := "thread"
		if !brand {
			label = " thread" // first on the bar
		}
		if name > 0 {
			parts = append(parts, seg(label, trunc(m.chainName(), name)))
		}
		if m.timeline.position[1] > 0 {
			at := "at"
			if len(parts) == 0 {
				at = " at"
			}
			parts = append(parts, seg(at, fmt.Sprintf("@%s %d/%d", m.timeline.tree.label(m.timeline.tree.cursor), m.timeline.position[0], m.timeline.position[1])))
		}
		if branch && m.timeline.branch != "" {
			parts = append(parts, th.StatusLabel.Render(m.timeline.branch))
		}
		if a := m.runs.armed(); a != "" {
			parts = append(parts, th.Error.Render("✝ next run dies at "+a))
		}
		return parts
	}
	parts := leftOf(true, 24, true)
	var extra []string // the live marker, after the left side in every form
	// optional segments are added while they fit, each in its long form or
	// else its short one.
	var optional [][]string
	if m.screen == screenThread && m.sess.thread != "" {
		if live, following := m.follow.marker(m.theme, m.w-width(strings.Join(parts, sep))-6); live != "" {
			extra = append(extra, live)
		} else if following != "" {
			optional = append(optional, []string{following})
		}
		if rs := m.runs.settings(); len(rs.InterruptBefore)+len(rs.InterruptAfter) > 0 {
			var bs []string
			for _, n := range rs.InterruptBefore {
				bs = append(bs, "before "+n)
			}
			for _, n := range rs.InterruptAfter {
				bs = append(bs, "after "+n)
			}
			optional = append(optional, []string{th.StatusLabel.Render("⏸ " + strings.Join(bs, ", "))})
		}
	}
	if l := m.sess.deps.RunnerLabel; l != "" {
		short := l
		if i := strings.Index(l, " ("); i > 0 {
			short = l[:i]
		}
		optional = append(optional, []string{seg("runs", termtext.Line(l)), seg("runs", termtext.Line(short))})
	}
	optional = append(optional, []string{seg("store", termtext.Line(m.sess.deps.StoreLabel))})
	right := ""
	switch {
	case m.status.text != "":
		right = m.status.View(th)
	case m.live.starting:
		right = th.StatusRun.Render(m.spin.View() + " starting…")
	case m.live.run != nil && m.live.progress != nil:
		right = th.StatusRun.Render(m.spin.View() + " " + m.live.progress.line())
	}
	left := strings.Join(append(parts, extra...), sep)
	for _, v := range []struct {
		brand, branch bool
		name          int
	}{{false, true, 24}, {false, false, 24}, {false, false, 12}, {false, false, 6}, {false, false, 0}} {
		// A status line gets half the bar at least (below).
		if width(left)+min(width(right), m.w/2)+4 <= m.w || m.screen != screenThread || m.sess.thread == "" {
			break
		}
		left = strings.Join(append(leftOf(v.brand, v.name, v.branch), extra...), sep)
	}
	if right != "" {
		// A status line too long for the bar says where to read it whole.
		// It gets half the bar at least: the left side is cut for it.
		if room := max(m.w-width(left)-4, m.w/2); width(right) > room {
			more := " (" + m.keys.Log.Help().Key + ")"
			right = trunc(right, max(room-width(more), 1)) + th.StatusLabel.Render(more)
		}
	}
	room := m.w - width(left) - width(right) - 2
optional:
	for _, alts := range optional {
		for _, o := range alts {
			if width(o)+width(sep) <= room {
				left += sep + o
				room -= width(o) + width(sep)
				continue optional
			}
		}
		break
	}
	left = trunc(left, m.w-width(right)-2)
	gap := max(m.w-width(left)-width(right)-1, 1)
	return th.StatusBar.Render(fit(left+strings.Repeat(" ", gap)+right, m.w))
}

func (m *Model) viewHelpLine() string {
	switch {
	case m.pager.shown():
		return m.keyLine(m.pager.ShortHelp())
	case m.dialog != nil:
		return fit("", m.w)
	case m.nav.prompting():
		return m.keyLine(m.nav.ShortHelp())
	case m.screen == screenThreads:
		return m.keyLine(m.readOnly.withoutOff(m.threads.ShortHelp(), m.screen))
	case m.screen == screenLessons:
		return m.keyLine(m.lessons.ShortHelp())
	case m.composer.open:
		return m.keyLine(m.composer.ShortHelp())
	}
	return m.keyLine(m.shortHelp())
}

// keyLine is the footer: bubbles/help's short view of bs, which lists the
// most needed keys first. When it is too wide, keys are dropped from the
// end of the list, an ellipsis in their place, but for the last ones: ?
// help and q quit (or whatever key ends the list) stay.
func (m *Model) keyLine(bs []key.Binding) string {
	return keyLine(m.help, m.theme, m.w, bs, m.endsFooter)
}

// keyLine is a footer of keys w cells wide: short of room it drops keys
// from the end of the list, keeping those ends says stay (help, quit),
// and marks the cut with "…" (the thread view's footer).
func keyLine(h help.Model, th *themes.Theme, w int, bs []key.Binding, ends func(key.Binding) bool) string {
	h.Width = 0 // measured here: help would cut the right end
	line := h.ShortHelpView(bs)
	if width(line)+1 <= w || len(bs) < 2 {
		return fit(" "+line, w)
	}
	pinned := 1
	for pinned < len(bs)-1 && ends(bs[len(bs)-1-pinned]) {
		pinned++
	}
	head, tail := bs[:len(bs)-pinned], bs[len(bs)-pinned:]
	sep := h.Styles.ShortSeparator.Render(h.ShortSeparator)
	for len(head) > 0 {
		head = head[:len(head)-1]
		line = h.ShortHelpView(head)
		if len(head) > 0 {
			line += sep
		}
		line += th.HelpSep.Render("…") + sep + h.ShortHelpView(tail)
		if width(line)+1 <= w {
			break
		}
	}
	return fit(" "+line, w)
}

// endsFooter is whether b is a key that stays at a footer's end: help or
// quit.
func (m *Model) endsFooter(b key.Binding) bool {
	k := b.Help().Key
	return k == m.keys.Help.Help().Key || k == m.keys.Quit.Help().Key || k == short(m.keys.Quit, "").Help().Key
}

// shortHelp is the thread view's footer. The live strip's keys when it
// has any (kill during a run, resume after a kill, the answer at an
// approval gate); else the thread view's with the focused component's:
// the timeline's (h/l scrub from any focus) and, when a pane has the
// focus, the pane's.
func (m *Model) shortHelp() []key.Binding {
	if bs := m.live.ShortHelp(); bs != nil {
		return bs
	}
	focused := m.timeline.ShortHelp()
	if m.focus != focusTimeline {
		focused = append(focused, m.content.ShortHelp()...)
	}
	return m.readOnly.withoutOff(m.keys.footer(focused), m.screen)
}

// helpLines lists every key of the current screen, in as many columns as
// fit, and the width of the box that shows them.
func (m *Model) helpLines() (title string, lines []string, w int) {
	th := m.theme
	var groups [][]key.Binding
	if m.screen == screenThreads {
		groups = m.readOnly.markOff(m.threads.FullHelp(), m.screen)
		title = "Keys · threads"
	} else if m.screen == screenLessons {
		groups = m.lessons.FullHelp()
		title = "Keys · lessons"
	} else {
		groups = m.keys.FullHelp()
		if m.sess.readOnly() {
			groups = m.keys.readOnlyHelp()
		}
		groups = m.readOnly.markOff(groups, m.screen)
		title = "Keys · thread view"
	}
	lines, w = helpColumns(th, groups, m.w)
	lines = append(lines, "")
	for _, l := range wrap("Scrubbing follows the highlighted branch; [ ] switch branches; sending continues the branch's end, f forks at the cursor. L shows every status line in full. Keys can be rebound in "+configHint+".", w-4) {
		lines = append(lines, th.Muted.Render(l))
	}
	return title, lines, w
}

// helpColumns lays key groups out in as many columns as fit a screen
// screenW wide (each group whole in one column), and says how wide the
// box that shows them is: the thread view's ?.
func helpColumns(th *themes.Theme, groups [][]key.Binding, screenW int) (lines []string, w int) {
	keyW, descW := 0, 0
	for _, g := range groups {
		for _, b := range g {
			keyW = max(keyW, width(b.Help().Key))
			descW = max(descW, width(b.Help().Desc))
		}
	}
	colW := keyW + 2 + descW
	maxW := screenW - 6
	cols := min(max(maxW/(colW+3), 1), len(groups))
	colLines := make([][]string, cols)
	for _, g := range groups {
		// Each group goes to the shortest column, so the box stays low.
		c := 0
		for j := range colLines {
			if len(colLines[j]) < len(colLines[c]) {
				c = j
			}
		}
		if len(colLines[c]) > 0 {
			colLines[c] = append(colLines[c], "")
		}
		for _, b := range g {
			k := b.Help().Key
			colLines[c] = append(colLines[c], th.HelpKey.Render(k+strings.Repeat(" ", max(keyW-width(k), 0)))+"  "+th.HelpDesc.Render(b.Help().Desc))
		}
	}
	rows := 0
	for _, c := range colLines {
		rows = max(rows, len(c))
	}
	cw := min(colW, maxW/cols-3)
	for r := 0; r < rows; r++ {
		var b strings.Builder
		for c := range colLines {
			cell := ""
			if r < len(colLines[c]) {
				cell = colLines[c][r]
			}
			b.WriteString(fit(cell, cw))
			if c < len(colLines)-1 {
				b.WriteString("   ")
			}
		}
		lines = append(lines, b.String())
	}
	w = min(cols*(cw+3)+4, screenW-2)
	return lines, w
}

// logLines are the status log's lines, each status in full, wrapped.
func (m *Model) logLines() (title string, lines []string, w int) {
	th := m.theme
	w = min(m.w-2, 100)
	inner := max(w-6, 8)
	title = fmt.Sprintf("Status log · %d", len(m.status.log))
	if len(m.status.log) == 0 {
		return title, []string{th.Muted.Render("No status lines yet.")}, w
	}
	for _, e := range m.status.log {
		mark, st := "· ", th.Text
		if e.isErr {
			mark, st = "✗ ", th.Error
		}
		for i, l := range wrap(e.text, inner) {
			if i > 0 {
				mark = "  "
			}
			lines = append(lines, st.Render(mark+l))
		}
	}
	return title, lines, w
}

func (m *Model) pagerContent() (string, []string, int) {
	if m.pager.log {
		return m.logLines()
	}
	return m.helpLines()
}

// viewPager draws the help or the status log.
func (m *Model) viewPager() string {
	title, lines, w := m.pagerContent()
	return m.pager.View(m.theme, title, lines, w)
}

// openPager shows the help (help) or the status log, the log at its end.
func (m *Model) openPager(help bool) {
	n := 0
	if !help {
		_, lines, _ := m.logLines()
		n = len(lines)
	}
	m.pager.open(help, n)
}

// onPagerKey scrolls or closes the help or the log; a burst of keys is
// taken one by one.
func (m *Model) onPagerKey(msg tea.KeyMsg) tea.Cmd {
	_, lines, _ := m.pagerContent()
	if keys := splitRunes(msg); keys != nil { // "jjjj" typed fast: each scrolls
		for i, k := range keys {
			if closed, _ := m.pager.Update(pagerKeyMsg{k, len(lines)}); closed && i+1 < len(keys) {
				// "qf" typed fast: q closes, f is the screen's below.
				return m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: msg.Runes[i+1:], Alt: msg.Alt})
			}
		}
		return nil
	}
	if closed, _ := m.pager.Update(pagerKeyMsg{msg, len(lines)}); closed && msg.String() == "ctrl+c" {
		return m.askQuit()
	}
	return nil
}

// viewLessons draws the picker screen.
func (m *Model) viewLessons() string {
	return m.lessons.View(m.theme, m.sess.deps.StoreLabel) + "\n" + m.viewStatus() + "\n" + m.viewHelpLine()
}

func (m *Model) viewThreads() string {
	body := m.threads.View(m.theme, m.chain(), m.sess.deps.StoreLabel, m.w, m.h-2)
	return body + "\n" + m.viewStatus() + "\n" + m.viewHelpLine()
}

// chainName is the open chain as the status bar names it: the thread, and
// a subgraph's namespace after it ("t-main › review:43a3a66f…ecc4").
func (m *Model) chainName() string {
	if m.sess.ns == "" {
		return termtext.Name(m.sess.thread)
	}
	return termtext.Name(m.sess.thread) + " › " + lgShortNS(m.sess.ns)
}

// --- zoom (+, nav.go) ---

// afterNavKey lays the screen out again when a key changed which pane is
// zoomed.
func (m *Model) afterNavKey() {
	if m.nav.zoomStale(m.zoomedPane()) {
		m.relayout()
	}
}

// zoomedPane is what + shows full screen: the focused pane, or -1 for the
// timeline.
func (m *Model) zoomedPane() int {
	if m.focus == focusTimeline {
		return -1
	}
	return m.focusedPane()
}

// zoomSizes gives the zoomed pane the whole body (relayout calls it).
func (m *Model) zoomSizes() {
	if !m.nav.zoom {
		return
	}
	p := m.zoomedPane()
	m.nav.zoomedTo(p)
	inner := m.layout.paneInner
	if p < 0 {
		m.timeline.SetSize(m.w-2, inner)
		m.timeline.ensureVisible()
		return
	}
	m.content.zoom(p, m.w-2, inner)
	m.syncPanes()
}

// zoomedCols is the body when a pane is zoomed.
func (m *Model) zoomedCols() [][]string {
	l := m.layout
	p := m.zoomedPane()
	var s string
	if p < 0 {
		s = frame(m.timeline.title()+" · + back", m.timeline.View(), m.w, l.bodyH, true, m.border(true), m.theme.PaneTitleFocused)
	} else {
		s = m.framePane(p, m.w, true)
	}
	return [][]string{strings.Split(s, "\n")}
}
