// Package themes holds the colour themes of rewind's TUI: dark, light,
// high-contrast and a no-colour theme, each with the chroma style used to
// highlight JSON and diffs in the same palette.
//
// The TUI takes every style it draws with from a Theme, so switching themes
// (or honouring NO_COLOR) changes the whole screen and nothing is hard-coded
// elsewhere.
package themes

import (
	"embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	"github.com/charmbracelet/lipgloss"
)

// chromaBases are the chroma styles the themes start from: chroma's own
// files, copied (chroma/README.md), because its styles package parses
// every style it has when the program starts.
//
//go:embed chroma/*.xml
var chromaBases embed.FS

// Theme names.
const (
	Dark         = "dark"
	Light        = "light"
	HighContrast = "high-contrast"
	NoColor      = "no-color"
)

// Default is the theme used when nothing else is chosen.
const Default = Dark

// Theme is every style the TUI uses.
type Theme struct {
	Name string
	// chroma is the style Chroma returns, built on its first call.
	chroma func() *chroma.Style

	// Screen is the colour of the whole screen: its background and the
	// foreground of text no other style colours. A coloured theme sets
	// both, so it reads the same on a dark and a light terminal (the TUI
	// paints it behind every cell: Paint); no-color sets neither and
	// draws in the terminal's own colours.
	Screen lipgloss.Style

	// Pane frames.
	Border           lipgloss.Style
	BorderFocused    lipgloss.Style
	PaneTitle        lipgloss.Style
	PaneTitleFocused lipgloss.Style
	Tab              lipgloss.Style
	TabActive        lipgloss.Style

	// Text.
	Text    lipgloss.Style
	Muted   lipgloss.Style
	Strong  lipgloss.Style
	Accent  lipgloss.Style
	Error   lipgloss.Style
	Warning lipgloss.Style
	Success lipgloss.Style
	Heading lipgloss.Style

	// Conversation.
	Index           lipgloss.Style
	SpeakerUser     lipgloss.Style
	SpeakerExecutor lipgloss.Style
	SpeakerTool     lipgloss.Style
	SpeakerCritic   lipgloss.Style
	SpeakerReply    lipgloss.Style
	SpeakerOther    lipgloss.Style
	ToolCall        lipgloss.Style
	ToolRail        lipgloss.Style
	SummaryBorder   lipgloss.Style
	SummaryTitle    lipgloss.Style
	SummaryText     lipgloss.Style
	Notice          lipgloss.Style
	Fold            lipgloss.Style

	// Timeline.
	Cursor       lipgloss.Style
	OnBranch     lipgloss.Style
	OffBranch    lipgloss.Style
	Rail         lipgloss.Style
	SourceInput  lipgloss.Style
	SourceLoop   lipgloss.Style
	SourceFork   lipgloss.Style
	SourceUpdate lipgloss.Style
	Paused       lipgloss.Style

	// Subtask statuses.
	StatusDone     lipgloss.Style
	StatusPending  lipgloss.Style
	StatusRedo     lipgloss.Style
	StatusBlocked  lipgloss.Style
	StatusApproval lipgloss.Style

	// Status bar and help.
	StatusBar   lipgloss.Style
	StatusLabel lipgloss.Style
	StatusValue lipgloss.Style
	StatusRun   lipgloss.Style
	HelpKey     lipgloss.Style
	HelpDesc    lipgloss.Style
	HelpSep     lipgloss.Style

	// Dialogs and lists.
	DialogBorder lipgloss.Style
	DialogTitle  lipgloss.Style
	Selected     lipgloss.Style
	Prompt       lipgloss.Style
	Placeholder  lipgloss.Style
	// Match marks the words a search found (the search results).
	Match lipgloss.Style

	// Diff fallbacks (used for the structural markers around chroma output).
	DiffAdd  lipgloss.Style
	DiffDel  lipgloss.Style
	DiffHunk lipgloss.Style
}

// Names lists the themes, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(builders))
}

// Get returns the named theme; aliases like "nocolor", "mono" and "hc" are
// accepted.
func Get(name string) (*Theme, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "", "default":
		n = Default
	case "nocolor", "no_color", "mono", "none", "plain":
		n = NoColor
	case "hc", "highcontrast", "high_contrast", "contrast":
		n = HighContrast
	}
	b, ok := builders[n]
	if !ok {
		return nil, fmt.Errorf("unknown theme %q: choose one of %s", name, strings.Join(Names(), ", "))
	}
	return b(), nil
}

// Or returns the named theme, or the default theme when the name is unknown.
func Or(name string) *Theme {
	if t, err := Get(name); err == nil {
		return t
	}
	return dark()
}

// Next is the theme after name in Names order (for cycling at run time).
func Next(name string) string {
	ns := Names()
	for i, n := range ns {
		if n == name {
			return ns[(i+1)%len(ns)]
		}
	}
	return Default
}

var builders = map[string]func() *Theme{
	Dark:         dark,
	Light:        light,
	HighContrast: highContrast,
	NoColor:      noColor,
}

// Chroma is the chroma style that highlights JSON (pending task arguments,
// writes) and diffs in the theme's palette. It is parsed on first use, not
// when the theme is built: a screen that highlights nothing never pays it.
func (t *Theme) Chroma() *chroma.Style {
	if t.chroma == nil {
		return fallbackStyle()
	}
	return t.chroma()
}

// lazyChroma is chromaStyle(base, add, del, hunk, extra), built once, when first
// asked for.
func lazyChroma(base, add, del, hunk string, extra chroma.StyleEntries) func() *chroma.Style {
	return sync.OnceValue(func() *chroma.Style { return chromaStyle(base, add, del, hunk, extra) })
}

// palette is what differs between the coloured themes.
type palette struct {
	fg, muted, faint, accent, accent2         string
	red, green, yellow, blue, magenta, cyan   string
	border, borderFocus, cursorBg, cursorFg   string
	statusBg, statusFg, summaryBg, selectedBg string
	bg                                        string // the screen's
}

func fg(c string) lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Color(c)) }

func fromPalette(name string, p palette, chromaBase string, diffAdd, diffDel string, chromaFix chroma.StyleEntries) *Theme {
	t := &Theme{Name: name}
	t.chroma = lazyChroma(chromaBase, diffAdd, diffDel, p.accent, chromaFix)
	t.Screen = lipgloss.NewStyle().Foreground(lipgloss.Color(p.fg)).Background(lipgloss.Color(p.bg))

	t.Border = fg(p.border)
	t.BorderFocused = fg(p.borderFocus).Bold(true)
	t.PaneTitle = fg(p.muted).Bold(true)
	t.PaneTitleFocused = fg(p.accent).Bold(true)
	t.Tab = fg(p.muted)
	t.TabActive = fg(p.accent).Bold(true).Underline(true)

	t.Text = fg(p.fg)
	t.Muted = fg(p.muted)
	t.Strong = fg(p.fg).Bold(true)
	t.Accent = fg(p.accent)
	t.Error = fg(p.red).Bold(true)
	t.Warning = fg(p.yellow)
	t.Success = fg(p.green)
	t.Heading = fg(p.accent2).Bold(true)

	t.Index = fg(p.faint)
	t.SpeakerUser = fg(p.blue).Bold(true)
	t.SpeakerExecutor = fg(p.cyan).Bold(true)
	t.SpeakerTool = fg(p.yellow).Bold(true)
	t.SpeakerCritic = fg(p.magenta).Bold(true)
	t.SpeakerReply = fg(p.green).Bold(true)
	t.SpeakerOther = fg(p.fg).Bold(true)
	t.ToolCall = fg(p.yellow)
	t.ToolRail = fg(p.yellow)
	t.SummaryBorder = fg(p.accent2)
	t.SummaryTitle = fg(p.accent2).Bold(true)
	t.SummaryText = fg(p.muted)
	t.Notice = fg(p.accent2).Italic(true)
	t.Fold = fg(p.faint).Italic(true)

	t.Cursor = lipgloss.NewStyle().Foreground(lipgloss.Color(p.cursorFg)).Background(lipgloss.Color(p.cursorBg)).Bold(true)
	t.OnBranch = fg(p.fg)
	t.OffBranch = fg(p.faint)
	t.Rail = fg(p.faint)
	t.SourceInput = fg(p.blue)
	t.SourceLoop = fg(p.muted)
	t.SourceFork = fg(p.magenta).Bold(true)
	t.SourceUpdate = fg(p.yellow)
	t.Paused = fg(p.yellow).Bold(true)

	t.StatusDone = fg(p.green)
	t.StatusPending = fg(p.muted)
	t.StatusRedo = fg(p.yellow)
	t.StatusBlocked = fg(p.red)
	t.StatusApproval = fg(p.magenta).Bold(true)

	t.StatusBar = lipgloss.NewStyle().Foreground(lipgloss.Color(p.statusFg)).Background(lipgloss.Color(p.statusBg))
	t.StatusLabel = t.StatusBar.Foreground(lipgloss.Color(p.muted))
	t.StatusValue = t.StatusBar.Bold(true)
	t.StatusRun = t.StatusBar.Foreground(lipgloss.Color(p.accent)).Bold(true)
	t.HelpKey = fg(p.accent)
	t.HelpDesc = fg(p.muted)
	t.HelpSep = fg(p.faint)

	t.DialogBorder = fg(p.accent)
	t.DialogTitle = fg(p.accent).Bold(true)
	t.Selected = lipgloss.NewStyle().Foreground(lipgloss.Color(p.cursorFg)).Background(lipgloss.Color(p.selectedBg)).Bold(true)
	t.Prompt = fg(p.accent).Bold(true)
	t.Placeholder = fg(p.faint)
	t.Match = fg(p.yellow).Bold(true).Underline(true)

	t.DiffAdd = fg(diffAdd)
	t.DiffDel = fg(diffDel)
	t.DiffHunk = fg(p.cyan)
	return t
}

func dark() *Theme {
	return fromPalette(Dark, palette{
		fg: "#d8dee9", muted: "#9aa5b8", faint: "#6b7385", accent: "#7aa2f7", accent2: "#bb9af7",
		red: "#f7768e", green: "#9ece6a", yellow: "#e0af68", blue: "#7dcfff", magenta: "#c678dd", cyan: "#73daca",
		border: "#626a8c", borderFocus: "#7aa2f7", cursorBg: "#3d59a1", cursorFg: "#ffffff",
		statusBg: "#1f2335", statusFg: "#c0caf5", summaryBg: "#24283b", selectedBg: "#364a82",
		bg: "#1a1b26",
	}, "github-dark", "#9ece6a", "#f7768e", nil)
}

func light() *Theme {
	return fromPalette(Light, palette{
		fg: "#24292f", muted: "#57606a", faint: "#8c959f", accent: "#0550ae", accent2: "#8250df",
		red: "#cf222e", green: "#116329", yellow: "#9a6700", blue: "#0969da", magenta: "#a0119e", cyan: "#1b7c83",
		border: "#8c959f", borderFocus: "#0969da", cursorBg: "#0969da", cursorFg: "#ffffff",
		statusBg: "#eaeef2", statusFg: "#24292f", summaryBg: "#f6f8fa", selectedBg: "#0550ae",
		bg: "#ffffff",
	}, "github", "#116329", "#cf222e", chroma.StyleEntries{
		// github's error token is near-white on a red background; the TUI
		// takes no token background, so it would vanish on white.
		chroma.Error: "#cf222e",
	})
}

// highContrast uses the 16 basic ANSI colours so terminals map them
// exactly, on black; blue is 75 (#5fafff), basic blue (12) being too faint
// on black in xterm's palette.
func highContrast() *Theme {
	t := fromPalette(HighContrast, palette{
		fg: "15", muted: "7", faint: "7", accent: "14", accent2: "13",
		red: "9", green: "10", yellow: "11", blue: "75", magenta: "13", cyan: "14",
		border: "15", borderFocus: "11", cursorBg: "11", cursorFg: "0",
		statusBg: "15", statusFg: "0", summaryBg: "0", selectedBg: "11",
		bg: "0",
	}, "hr_high_contrast", "#00ff00", "#ff5555", chroma.StyleEntries{
		// JSON keys: swapoff's teal (the fallback this theme draws with) is
		// too faint on black.
		chroma.NameAttribute: "#00ffff",
	})
	t.BorderFocused = t.BorderFocused.Bold(true)
	t.StatusRun = t.StatusBar.Foreground(lipgloss.Color("4")).Bold(true) // on the white bar
	t.OffBranch = fg("7")
	t.StatusLabel = t.StatusBar
	return t
}

// noColor draws with attributes only (bold, underline, reverse): it is the
// theme for NO_COLOR, and every cue it gives also has a textual marker.
func noColor() *Theme {
	p := lipgloss.NewStyle()
	t := &Theme{Name: NoColor, chroma: lazyChroma("bw", "bold", "underline", "", nil)}
	t.Border, t.BorderFocused = p, p.Bold(true)
	t.PaneTitle, t.PaneTitleFocused = p, p.Bold(true).Underline(true)
	t.Tab, t.TabActive = p, p.Bold(true).Underline(true)
	t.Text, t.Muted, t.Strong, t.Accent = p, p, p.Bold(true), p.Bold(true)
	t.Error, t.Warning, t.Success, t.Heading = p.Bold(true).Reverse(true), p.Bold(true), p, p.Bold(true).Underline(true)
	t.Index = p
	t.SpeakerUser, t.SpeakerExecutor, t.SpeakerTool = p.Bold(true), p.Bold(true), p.Bold(true)
	t.SpeakerCritic, t.SpeakerReply, t.SpeakerOther = p.Bold(true), p.Bold(true), p.Bold(true)
	t.ToolCall, t.ToolRail = p.Italic(true), p
	t.SummaryBorder, t.SummaryTitle, t.SummaryText = p, p.Bold(true), p
	t.Notice, t.Fold = p.Italic(true), p.Italic(true)
	t.Cursor, t.OnBranch, t.OffBranch, t.Rail = p.Reverse(true).Bold(true), p.Bold(true), p, p
	t.SourceInput, t.SourceLoop, t.SourceFork, t.SourceUpdate, t.Paused = p, p, p.Bold(true), p.Italic(true), p.Bold(true)
	t.StatusDone, t.StatusPending, t.StatusRedo, t.StatusBlocked, t.StatusApproval = p, p, p.Bold(true), p.Bold(true), p.Bold(true).Underline(true)
	t.StatusBar, t.StatusLabel, t.StatusValue, t.StatusRun = p.Reverse(true), p.Reverse(true), p.Reverse(true).Bold(true), p.Reverse(true).Bold(true)
	t.HelpKey, t.HelpDesc, t.HelpSep = p.Bold(true), p, p
	t.DialogBorder, t.DialogTitle, t.Selected, t.Prompt, t.Placeholder = p.Bold(true), p.Bold(true), p.Reverse(true), p.Bold(true), p.Italic(true)
	t.DiffAdd, t.DiffDel, t.DiffHunk = p.Bold(true), p.Underline(true), p.Italic(true)
	t.Match = p.Bold(true).Underline(true)
	return t
}

// baseStyle parses the embedded chroma style base (chroma/base.xml).
func baseStyle(base string) (*chroma.Style, error) {
	f, err := chromaBases.Open("chroma/" + base + ".xml")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return chroma.NewXMLStyle(f)
}

// fallbackStyle is chroma's fallback, swapoff (styles.Fallback), for a
// style that does not build: high-contrast's, whose hunk colour is an ANSI
// number chroma does not take, has always been it.
var fallbackStyle = sync.OnceValue(func() *chroma.Style {
	if s, err := baseStyle("swapoff"); err == nil {
		return s
	}
	return chroma.MustNewStyle("fallback", chroma.StyleEntries{})
})

// chromaStyle takes a chroma style and makes sure diff insertions,
// deletions and hunk headers are marked in the theme's colours.
func chromaStyle(base, add, del, hunk string, extra chroma.StyleEntries) *chroma.Style {
	bs, err := baseStyle(base)
	if err != nil {
		bs = fallbackStyle()
	}
	b := bs.Builder()
	if add != "" {
		b.Add(chroma.GenericInserted, add)
	}
	if del != "" {
		b.Add(chroma.GenericDeleted, del)
	}
	if hunk != "" {
		b.Add(chroma.GenericSubheading, hunk)
		b.Add(chroma.GenericHeading, hunk+" bold")
	} else {
		b.Add(chroma.GenericSubheading, "bold")
		b.Add(chroma.GenericHeading, "bold")
	}
	s, err := b.Build()
	if err != nil {
		s = fallbackStyle()
	}
	if len(extra) == 0 {
		return s
	}
	b = s.Builder()
	for tt, e := range extra {
		b.Add(tt, e)
	}
	if s, err = b.Build(); err != nil {
		return fallbackStyle()
	}
	return s
}
