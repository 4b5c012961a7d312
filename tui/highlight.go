package tui

import (
	"embed"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	"github.com/charmbracelet/lipgloss"
)

// The lexers the TUI highlights with, parsed on first use: chroma's own
// files, copied (lexers/README.md), because chroma's lexers package
// registers every lexer it has when the program starts.
//
//go:embed lexers/*.xml
var lexerFiles embed.FS

var lexerByName = map[string]func() chroma.Lexer{
	"json": lazyLexer("lexers/json.xml"),
	"diff": lazyLexer("lexers/diff.xml"),
}

func lazyLexer(path string) func() chroma.Lexer {
	return sync.OnceValue(func() chroma.Lexer {
		l, err := chroma.NewXMLLexer(lexerFiles, path)
		if err != nil {
			return nil // the text shows plain (TestEmbeddedLexersMatch)
		}
		return chroma.Coalesce(l)
	})
}

// lexer is the named lexer (json, diff), or nil.
func lexer(name string) chroma.Lexer {
	if f, ok := lexerByName[name]; ok {
		return f()
	}
	return nil
}

// highlighter colours JSON and diffs with the theme's chroma style. It
// renders through lipgloss, so the colour profile (and NO_COLOR, and the
// Ascii profile of the tests) applies to highlighted text like to the rest.
type highlighter struct {
	// style is the theme's chroma style (Theme.Chroma: parsed when it is
	// first asked for, by the first text highlighted).
	style  func() *chroma.Style
	styles map[chroma.TokenType]lipgloss.Style
}

func newHighlighter(s func() *chroma.Style) *highlighter {
	return &highlighter{style: s, styles: map[chroma.TokenType]lipgloss.Style{}}
}

func (h *highlighter) styleFor(tt chroma.TokenType) lipgloss.Style {
	if s, ok := h.styles[tt]; ok {
		return s
	}
	s := lipgloss.NewStyle()
	if h.style != nil {
		e := h.style().Get(tt)
		if e.Colour.IsSet() {
			s = s.Foreground(lipgloss.Color(e.Colour.String()))
		}
		if e.Bold == chroma.Yes {
			s = s.Bold(true)
		}
		if e.Italic == chroma.Yes {
			s = s.Italic(true)
		}
		if e.Underline == chroma.Yes {
			s = s.Underline(true)
		}
	}
	h.styles[tt] = s
	return s
}

// lines highlights already sanitised text with the named lexer and returns
// its lines, styled. Each line is styled on its own, so a line can be
// wrapped, cut or framed without a colour leaking into the next.
func (h *highlighter) lines(name, text string) []string {
	l := lexer(name)
	if l == nil {
		return strings.Split(text, "\n")
	}
	it, err := l.Tokenise(nil, text)
	if err != nil {
		return strings.Split(text, "\n")
	}
	var out []string
	var cur strings.Builder
	for tok := it(); tok != chroma.EOF; tok = it() {
		st := h.styleFor(tok.Type)
		parts := strings.Split(tok.Value, "\n")
		for i, p := range parts {
			if i > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
			if p != "" {
				cur.WriteString(st.Render(p))
			}
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	// The lexers end text with a newline; drop the empty line it leaves.
	if n := len(out); n > 0 && out[n-1] == "" && !strings.HasSuffix(text, "\n\n") {
		out = out[:n-1]
	}
	return out
}
