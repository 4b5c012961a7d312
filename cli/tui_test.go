package cli_test

import (
	"strings"
	"testing"
)

// `rewind tui nosuch` says what the CLI says, exit 1, before any screen
// opens (it used to show an empty thread "loading…" for ever); the test
// runs without a terminal, so a TUI that started would fail differently.
func TestTUIRefusesAnUnknownThread(t *testing.T) {
	_, spec := dbSpec(t)
	if r := rewind(t, nil, "run", "--store", spec, "--thread", "t", "--input", "Where is my parcel SO20260901?"); r.code != 0 {
		t.Fatalf("setup: %s", r.stderr)
	}
	cli := rewind(t, nil, "log", "nosuch", "--store", spec)
	for _, args := range [][]string{{"tui", "nosuch"}, {"tui", "--thread", "nosuch"}, {"--thread", "nosuch"}} {
		r := rewind(t, nil, append(args, "--store", spec)...)
		if r.code != 1 || !strings.Contains(r.stderr, `thread "nosuch" not found: list threads with `+"`rewind threads`") {
			t.Errorf("rewind %v: exit %d, stderr %q; want exit 1 and the CLI's %q", args, r.code, r.stderr, cli.stderr)
		}
		if r.stderr != cli.stderr {
			t.Errorf("rewind %v says %q, the CLI says %q", args, r.stderr, cli.stderr)
		}
	}
}
