package ticketview

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"rewind/engine/ticket"
	"rewind/themes"
	"rewind/tui"
)

// The extension keeps each message's lines (package tui kept them in its
// renderer, one per theme): a theme chosen meanwhile (T) draws the same
// checkpoint's conversation in its own colours, not the lines kept from
// the theme before.
func TestAThemeChangeRedrawsTheConversation(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	x := Extension()
	v := ticket.State{Messages: []ticket.Message{{Index: 1, Role: ticket.RoleUser, Speaker: "user", Content: "where is my parcel?"}}}
	// The message's lines, under the conversation's rule (drawn anew).
	conv := func(th *themes.Theme) string {
		return strings.Join(x.Conversation(tui.Shown{Value: v, Theme: th, Width: 60})[1:], "\n")
	}
	dark, light := themes.Or(themes.Dark), themes.Or(themes.Light)
	first, other, again := conv(dark), conv(light), conv(dark)
	if other == first {
		t.Fatalf("the light theme drew the dark theme's lines:\n%q", other)
	}
	if again != first {
		t.Errorf("the dark theme again drew otherwise:\n%q\nthen\n%q", first, again)
	}
	if !strings.Contains(first, "where is my parcel?") {
		t.Errorf("the message is not drawn: %q", first)
	}
}
