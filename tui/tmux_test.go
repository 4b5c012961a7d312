package tui

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// lookTmux finds tmux for an end-to-end test: CI must have it, elsewhere
// the test is skipped.
func lookTmux(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tmux is required in CI for the end-to-end test: %v", err)
		}
		t.Skip("tmux is not installed")
	}
	return bin
}

// tmuxTerm is a real terminal for an end-to-end test: a tmux server of the
// test's own (socket) with one session. The program's stderr goes to the
// file stderr, shown when a wait times out.
type tmuxTerm struct {
	t                            *testing.T
	bin, socket, session, stderr string
}

// newTmux makes the terminal; the server goes with the test.
func newTmux(t *testing.T, tmuxBin, socket, session, stderr string) *tmuxTerm {
	m := &tmuxTerm{t: t, bin: tmuxBin, socket: socket, session: session, stderr: stderr}
	t.Cleanup(func() { _, _ = m.run("kill-server") })
	return m
}

// run runs one tmux command on the test's server.
func (m *tmuxTerm) run(args ...string) (string, error) {
	out, err := exec.Command(m.bin, append([]string{"-L", m.socket}, args...)...).CombinedOutput()
	return string(out), err
}

// start runs shell in the session at w×h. After the last session ends its
// server exits: a session started meanwhile can meet the exiting server,
// so it is tried again (a few times) when tmux says so.
func (m *tmuxTerm) start(w, h int, shell string) {
	m.t.Helper()
	for try := 0; ; try++ {
		out, err := m.run("new-session", "-d", "-s", m.session, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), shell)
		if err == nil {
			break
		}
		if try < 5 && strings.Contains(out, "server exited unexpectedly") {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		m.t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	m.t.Cleanup(func() { _, _ = m.run("kill-session", "-t", m.session) })
}

// capture is the screen as text.
func (m *tmuxTerm) capture() string {
	out, _ := m.run("capture-pane", "-p", "-t", m.session)
	return out
}

// waitUntil re-reads the screen until cond holds (a generous deadline: it
// only bounds a failing test) and returns it.
func (m *tmuxTerm) waitUntil(what string, cond func(string) bool) string {
	m.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		s := m.capture()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			stderr, _ := os.ReadFile(m.stderr)
			m.t.Fatalf("timed out waiting for %s; screen:\n%s\nstderr:\n%s", what, s, stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitFor waits until the screen shows every part.
func (m *tmuxTerm) waitFor(what string, parts ...string) string {
	m.t.Helper()
	return m.waitUntil(what, screenHas(parts...))
}

// screenHas is the condition "the screen shows every part".
func screenHas(parts ...string) func(string) bool {
	return func(s string) bool {
		for _, p := range parts {
			if !strings.Contains(s, p) {
				return false
			}
		}
		return true
	}
}

// send sends keys by their tmux names, in one send-keys.
func (m *tmuxTerm) send(keys ...string) {
	m.t.Helper()
	if out, err := m.run(append([]string{"send-keys", "-t", m.session}, keys...)...); err != nil {
		m.t.Fatalf("send-keys %v: %v\n%s", keys, err, out)
	}
}

// typeText types s literally.
func (m *tmuxTerm) typeText(s string) {
	m.t.Helper()
	if out, err := m.run("send-keys", "-t", m.session, "-l", s); err != nil {
		m.t.Fatalf("send-keys -l: %v\n%s", err, out)
	}
}
