package cli

import (
	"io"
	"testing"
	"time"

	"rewind/cli/app"
)

// The TUI's runs take a visible time by default (issue 33: a first run
// ended in under half a second, nothing to watch or kill); what the user
// gives, another model and a replay keep theirs, and the CLI keeps 0.
func TestTheTUIsMockLatencyIsVisible(t *testing.T) {
	none := func(string) bool { return false }
	cases := []struct {
		name          string
		flags         app.ModelFlags
		given         []string
		env           string
		latency, jitt time.Duration
	}{
		{"nothing given", app.ModelFlags{}, nil, "", TUIMockLatency, TUIMockJitter},
		{"--provider mock", app.ModelFlags{Provider: "mock"}, []string{"provider"}, "", TUIMockLatency, TUIMockJitter},
		{"--mock-latency 0", app.ModelFlags{}, []string{"mock-latency"}, "", 0, 0},
		{"--mock-jitter 1s", app.ModelFlags{MockJitter: time.Second}, []string{"mock-jitter"}, "", 0, time.Second},
		{"--provider openai", app.ModelFlags{Provider: "openai"}, []string{"provider"}, "", 0, 0},
		{"REWIND_PROVIDER=openai", app.ModelFlags{}, nil, "openai", 0, 0},
		{"--replay", app.ModelFlags{Replay: "x.json"}, []string{"replay"}, "", 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("REWIND_PROVIDER", c.env)
			given := none
			if len(c.given) > 0 {
				given = func(name string) bool {
					for _, g := range c.given {
						if g == name {
							return true
						}
					}
					return false
				}
			}
			m := c.flags
			watchable(&m, given)
			if m.MockLatency != c.latency || m.MockJitter != c.jitt {
				t.Errorf("latency %s jitter %s, want %s and %s", m.MockLatency, m.MockJitter, c.latency, c.jitt)
			}
		})
	}
	// The CLI's commands keep 0: their flags' default.
	for _, name := range []string{"run", "resume", "fork", "bench"} {
		root, _ := newRoot(io.Discard, io.Discard)
		c, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		if f := c.Flags().Lookup("mock-latency"); f != nil && f.DefValue != "0s" {
			t.Errorf("rewind %s --mock-latency defaults to %s, want 0s", name, f.DefValue)
		}
	}
}
