package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rewind/cli/rewindbin"
)

// A command on a terminal asks the terminal nothing: Bubble Tea v1's init
// wrote an OSC 11 colour query and a cursor-position request to every
// terminal stdout and waited up to five seconds for the answer, so on a
// pty that never answers (script(1), a git hook runner, ssh -tt) every
// command stalled five seconds and printed the query's bytes first
// (termquiet stops it). script gives the command such a pty.
func TestACommandOnATerminalAsksItNothing(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Fatalf("this test runs rewind on a pseudo-terminal with script(1), from util-linux (Debian: bsdutils): %v", err)
	}
	bin := rewindbin.Path(t)
	db := filepath.Join(t.TempDir(), "r.db")
	for _, args := range []string{"--version", "threads --store sqlite:" + db, "log --help"} {
		t.Run(strings.Fields(args)[0], func(t *testing.T) {
			t.Parallel()
			// TERM names a terminal termenv would ask (it skips screen, tmux
			// and dumb).
			cmd := exec.Command(script, "-qec", "env TERM=xterm-256color "+bin+" "+args, "/dev/null")
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("rewind %s on a pty: %v\n%q", args, err, out)
			}
			for _, q := range []string{"\x1b]11;?", "\x1b[6n"} {
				if strings.Contains(string(out), q) {
					t.Fatalf("rewind %s asked the terminal %q (Bubble Tea's colour query):\n%q", args, q, out)
				}
			}
			if len(strings.TrimSpace(string(out))) == 0 {
				t.Fatalf("rewind %s printed nothing on the pty", args)
			}
		})
	}
}
