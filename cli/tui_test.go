package cli_test

import (
	"strings"
	"testing"

	"rewind/store/langgraph/lgtest"
)

// `rewind tui nosuch` says what the CLI says, exit 1, before any screen
// opens (it used to show an empty thread "loading…" for ever); the test
// runs without a terminal, so a TUI that started would fail differently.
func TestTUIRefusesAnUnknownThread(t *testing.T) {
	t.Parallel()
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

// On a LangGraph database the TUI takes a thread as the read commands
// do: an unknown one and a prefix two threads share fail before the
// screen, with the words and exit codes of `rewind log`.
func TestTUIResolvesALangGraphThreadAsTheCLIDoes(t *testing.T) {
	t.Parallel()
	spec := "sqlite:" + lgtest.Copy(t, "sqlite-python.db")
	for _, c := range []struct {
		thread string
		code   int
	}{{"zz", 1}, {"t-", 2}} {
		cli := rewind(t, nil, "log", c.thread, "--store", spec)
		r := rewind(t, nil, "tui", c.thread, "--store", spec)
		if r.code != c.code || r.code != cli.code || r.stderr != cli.stderr {
			t.Errorf("rewind tui %s: exit %d %q; log says exit %d %q, want exit %d and the same words", c.thread, r.code, r.stderr, cli.code, cli.stderr, c.code)
		}
	}
}

// `rewind tui --auth-ttl 0` is refused by name (exit 2), as `rewind
// approve --auth-ttl 0` is: since the flag's default became the 1h it
// names, a 0 given was taken for 1h without a word.
func TestTUIRefusesAZeroGrantLifetime(t *testing.T) {
	t.Parallel()
	r := rewind(t, nil, "tui", "--auth-ttl", "0", "--store", "memory:")
	if r.code != 2 || !strings.Contains(r.stderr, "--auth-ttl 0s") || !strings.Contains(r.stderr, "e.g. 1h") {
		t.Errorf("tui --auth-ttl 0: exit %d, stderr %q; want exit 2 naming --auth-ttl and a lifetime to give", r.code, r.stderr)
	}
}
