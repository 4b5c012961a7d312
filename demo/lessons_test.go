package demo_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"rewind/cli/rewindbin"
	"rewind/demo"
)

var rewindBin string

func TestMain(m *testing.M) {
	// The lessons that kill workers start the real binary.
	var err error
	if rewindBin, err = rewindbin.Build(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		rewindbin.Exit(1)
	}
	rewindbin.Exit(m.Run())
}

// Every lesson, run as a teacher runs it (rewind demo LESSON --headless,
// the built binary, a fresh SQLite store), reaches its verdict with the
// figures a teacher points at; then every command its script prints runs
// exactly as printed and does what its step says.
func TestEveryLessonRunsAsPrinted(t *testing.T) {
	want := map[string][]string{
		"summary":           {"summary #1–", "PASS: ", "pinned facts kept", "refused before storing"},
		"site-log":          {"14 days, ", "in the facts ledger", "sign-off(s) verbatim"},
		"resume":            {"resume ran the 3 pending subtasks", "there 1 time(s)", "the wrong way has it 2 times"},
		"fork":              {"with @1: 2 branches from @1, the main head keeps 1 request; without an id: 1 branch, the head now holds 2 requests"},
		"migration":         {`read raw: attachment "", status WAITING`, `through the migration: attachment "blob://tickets/2025/att-old.png", status AWAITING_APPROVAL, budget 1`, "schema v99 checkpoint is refused", "upgrade rewind"},
		"bytes":             {"384 KB inline value", "once"},
		"side-effect":       {"no duplicate draft: 1 draft row(s)"},
		"stale-source":      {"changed at mid-fanout → re-read", "changed at awaiting-approval → write blocked", "changed at after-side-effect → verification failed"},
		"dangling-cut":      {"rewind's cut keeps #23–#28 verbatim (tool call #25 with its result #26): the stand-in answered the reply's request", "cut between #25 and #26", "the stand-in answered 400 Bad Request", "messages with role 'tool' must be a response to a preceding message with 'tool_calls'"},
		"narrative-summary": {"indexed summary (#1 user: …): approved t-2-invoice; sent back t-1-refund (it answers another question (shipping): #1 user asked about invoice, refund), then approved its redo", "flattened summary (lesson:narrative-summary-wrong-way, the wrong way): approved t-1-refund, t-2-invoice"},
		"kill":              {"PASS: 12 kill points", "mid-fanout: pending executor ×3, stored 1, redispatched 2"},
		"research":          {"3 parallel searches merged into 3 notes", "ended after 3 tool calls", "stopped before publish at @4", "revise looped back to the writer (1 revision)", "approve published at @9"},
	}
	t.Parallel()
	// All lessons at once (each its own store and state folders): they
	// wait on the binary's processes, and one after another the kill
	// lesson's 34 s came after 27 s of the others.
	rewindbin.Cases(t, demo.Lessons(), func(l demo.Lesson) string { return l.Name }, func(t *testing.T, l demo.Lesson) {
		if testing.Short() && l.Processes {
			t.Skip("kills worker processes")
		}
		if len(l.Steps) == 0 || l.Thread == "" || l.Proves == "" {
			t.Errorf("lesson %s has no script", l.Name)
		}
		spec := "sqlite:" + filepath.Join(t.TempDir(), "lesson.db")
		out, code := rewind(t, "demo", l.Name, "--headless", "--store", spec)
		if code != 0 {
			t.Fatalf("rewind demo %s exited %d:\n%s", l.Name, code, out)
		}
		printed, line := printedScript(t, out)
		t.Log(line)
		if !strings.HasPrefix(line, "PASS: ") {
			t.Fatalf("verdict: %s", line)
		}
		for _, w := range want[l.Name] {
			if !strings.Contains(line, w) {
				t.Errorf("verdict %q lacks %q", line, w)
			}
		}
		if l.Name == "resume" && !strings.Contains(out, ", then : @8 (the lesson's checkpoint)") {
			t.Errorf("the resume lesson does not say it opens on @8, the resumed run's last checkpoint:\n%s", out)
		}
		// Every command of the script, exactly as printed, does what
		// its step says.
		if len(printed) != len(l.Steps) {
			t.Fatalf("%d steps printed, the lesson has %d:\n%s", len(printed), len(l.Steps), out)
		}
		for i, st := range l.Steps {
			if len(st.Command) == 0 {
				if strings.Contains(printed[i], "rewind ") {
					t.Errorf("step %d names a rewind command in prose, which nothing runs: %s", i+1, printed[i])
				}
				continue
			}
			words, err := shellWords(printed[i])
			if err != nil || len(words) < 2 || words[0] != "rewind" {
				t.Fatalf("step %d is not a command line: %q (%v)", i+1, printed[i], err)
			}
			got, code := rewind(t, words[1:]...)
			if code != st.Exit {
				t.Errorf("step %d, %s: exit %d, want %d:\n%s", i+1, printed[i], code, st.Exit, got)
			}
			for _, w := range st.Expect {
				if !strings.Contains(got, w) {
					t.Errorf("step %d, %s: the output lacks %q:\n%s", i+1, printed[i], w, got)
				}
			}
		}
	})
	if len(want) != len(demo.Lessons()) {
		t.Errorf("%d lessons, %d checked", len(demo.Lessons()), len(want))
	}
}

// rewind runs the built binary with args: its output (stdout and stderr)
// and exit status (demo.ExitKilled when SIGKILLed).
func rewind(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(rewindBin, args...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "REWIND_STORE=", "DATABASE_URL=", "REWIND_SOURCES=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return string(out), demo.ExitKilled
		}
		return string(out), exit.ExitCode()
	}
	t.Fatalf("rewind %s: %v", strings.Join(args, " "), err)
	return "", 0
}

// printedScript reads what rewind demo printed: each step's first line
// ("N. what to do") and the verdict line.
func printedScript(t *testing.T, out string) (steps []string, verdict string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if n, rest, ok := strings.Cut(line, ". "); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			steps = append(steps, rest)
		}
		if strings.HasPrefix(line, "PASS: ") || strings.HasPrefix(line, "FAIL: ") {
			verdict = line
		}
	}
	return steps, verdict
}

// shellWords splits a command line as a POSIX shell does the words
// rewind demo prints: plain words and single-quoted ones ('\” a quote).
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord, quoted, escaped := false, false, false
	for _, r := range line {
		switch {
		case escaped:
			w.WriteRune(r)
			escaped = false
		case quoted && r == '\'':
			quoted = false
		case quoted:
			w.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == '\\':
			escaped, inWord = true, true
		case r == ' ':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quoted || escaped {
		return nil, errors.New("an unclosed quote")
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
