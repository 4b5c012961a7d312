package themes

import (
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/charmbracelet/lipgloss"
)

func TestEveryThemeIsComplete(t *testing.T) {
	if got := Names(); !reflect.DeepEqual(got, []string{Dark, HighContrast, Light, NoColor}) {
		t.Fatalf("themes: %v", got)
	}
	for _, name := range Names() {
		th, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if th.Name != name || th.Chroma() == nil {
			t.Fatalf("%s: name %q, chroma %v", name, th.Name, th.Chroma())
		}
		if e := th.Chroma().Get(chroma.GenericInserted); e.IsZero() {
			t.Fatalf("%s: its chroma style does not mark diff insertions", name)
		}
		// Every style field must be set: a zero style would mean the TUI
		// draws something the theme forgot.
		v := reflect.ValueOf(*th)
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			st, ok := v.Field(i).Interface().(lipgloss.Style)
			if !ok || name == NoColor {
				continue
			}
			if reflect.DeepEqual(st, lipgloss.NewStyle()) {
				t.Errorf("%s: style %s is not set", name, f.Name)
			}
		}
	}
}

func TestNoColorThemeHasNoColours(t *testing.T) {
	th, _ := Get("NO_COLOR")
	if th.Name != NoColor {
		t.Fatalf("alias NO_COLOR gave %s", th.Name)
	}
	v := reflect.ValueOf(*th)
	for i := 0; i < v.NumField(); i++ {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		st, ok := v.Field(i).Interface().(lipgloss.Style)
		if !ok {
			continue
		}
		if _, isNo := st.GetForeground().(lipgloss.NoColor); !isNo {
			t.Errorf("no-color style %s has a foreground", v.Type().Field(i).Name)
		}
		if _, isNo := st.GetBackground().(lipgloss.NoColor); !isNo {
			t.Errorf("no-color style %s has a background", v.Type().Field(i).Name)
		}
	}
	for _, tt := range th.Chroma().Types() {
		if e := th.Chroma().Get(tt); e.Colour.IsSet() && tt != chroma.Error {
			t.Errorf("no-color chroma style colours %s", tt)
		}
	}
}

func TestThemesDiffer(t *testing.T) {
	d, l := Or(Dark), Or(Light)
	if reflect.DeepEqual(d.Text.GetForeground(), l.Text.GetForeground()) {
		t.Fatal("dark and light share their text colour")
	}
	if d.Chroma().Name == l.Chroma().Name {
		t.Fatal("dark and light share a chroma style")
	}
}

func TestUnknownTheme(t *testing.T) {
	_, err := Get("neon")
	if err == nil || !strings.Contains(err.Error(), "dark, high-contrast, light, no-color") {
		t.Fatalf("want a clear error listing the themes, got %v", err)
	}
	if Or("neon").Name != Default {
		t.Fatal("Or should fall back to the default")
	}
	if Next(Light) != NoColor || Next(NoColor) != Dark {
		t.Fatal("Next should cycle in name order")
	}
}
