package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"rewind/tui/termtext"
)

// Thread ids and payloads with what a terminal acts on (OSC 52, a C1 CSI,
// bidi override and isolate, CR, LF, tab, DEL) go through every command
// that prints them, plain and --json, and through the errors that name
// them: nothing raw reaches stdout or stderr, an id cannot fake a row of
// `threads`, and --json still decodes to the exact id.
func TestHostileIDsAndPayloadsPrintHarmless(t *testing.T) {
	t.Parallel()
	bits := []string{"\x1b]52;c;cm0gLXJmIC8=\x07", "\u009b31m", "\u202e", "\u2066", "\r", "\n", "\t", "\x7f", "\x1b[2J"}
	id := "evil" + strings.Join(bits, "·")
	paused := id + "-paused"
	payload := "refund SO20260555 please " + strings.Join(bits, " ")
	eachStore(t, func(t *testing.T, db string) {
		check := func(args []string, wantCode int) (string, string) {
			t.Helper()
			code, out, stderr := run(t, append(args, "--store", db)...)
			if code != wantCode {
				t.Fatalf("%q: exit %d, want %d\n%s%s", args, code, wantCode, out, stderr)
			}
			for name, s := range map[string]string{"stdout": out, "stderr": stderr} {
				for _, r := range s {
					if termtext.Unsafe(r) && r != '\n' {
						t.Errorf("%q: %s holds a raw %U:\n%s", args, name, r, s)
						break
					}
				}
			}
			if wantCode != ExitOK && strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("%q: the error is not one line: %q", args, stderr)
			}
			if strings.Contains(strings.Join(args, " "), "--json") && wantCode == ExitOK {
				var v any
				if err := json.Unmarshal([]byte(out), &v); err != nil {
					t.Errorf("%q: --json output does not decode: %v\n%s", args, err, out)
				}
			}
			return out, stderr
		}
		out, _ := check([]string{"run", "--thread", id, "--input", payload, "--draft", "--auth-ttl", "1h"}, ExitOK)
		if !strings.Contains(out, "rewind approve "+idText(id)) {
			t.Errorf("run does not name the thread escaped:\n%s", out)
		}
		check([]string{"run", "--thread", paused, "--input", payload, "--interrupt-before", "executor", "--json"}, ExitOK)

		out, _ = check([]string{"threads"}, ExitOK)
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 {
			t.Errorf("threads prints %d lines for 2 threads: an id faked a row:\n%s", len(lines), out)
		}
		if !strings.Contains(out, idText(id)) {
			t.Errorf("threads does not show %q as %q:\n%s", id, idText(id), out)
		}
		out, _ = check([]string{"threads", "--json"}, ExitOK)
		var rows []struct{ ID string }
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 || (rows[0].ID != id && rows[1].ID != id) {
			t.Errorf("threads --json lost the exact id (%v): %s", err, out)
		}
		for _, args := range [][]string{
			{"log", id}, {"log", id, "--json"}, {"log", id, "--values"},
			{"show", id}, {"show", id, "--json"}, {"show", id, "1"}, {"show", id, "--message", "1"}, {"show", id, "--message", "1", "--json"},
			{"events", id}, {"events", id, "--json"},
			{"prune", id, "--keep-last", "1", "--dry-run"}, {"prune", id, "--keep-last", "1", "--dry-run", "--json"},
			{"fork", paused, "1", "--input", payload, "--interrupt-before", "executor"},
			{"fork", paused, "1", "--input", payload, "--interrupt-before", "executor", "--json"},
			{"discard", paused}, {"prune", "--all", "--keep-last", "2"},
		} {
			check(args, ExitOK)
		}
		check([]string{"reject", id, "--reason", payload}, ExitOK)
		check([]string{"run", "--thread", id, "--input", payload, "--draft", "--auth-ttl", "1h", "--json"}, ExitOK)
		check([]string{"approve", id, "--json"}, ExitOK)

		// A worker's JSON lines (the TUI reads them) are escaped as --json.
		out, _ = check([]string{"worker", "run", "--thread", id + "-w", "--input", payload}, ExitOK)
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Errorf("worker line does not decode: %v: %s", err, line)
			}
		}

		// Errors that name a hostile id or input.
		for _, args := range [][]string{
			{"log", "nope" + id}, {"show", id, "99"}, {"resume", id}, {"rm", "nope" + id}, {"discard", id},
			{"approve", id}, {"events", id, "99", "--json"}, {"prune", "nope" + id, "--keep-last", "1"},
		} {
			_, stderr := check(args, ExitFail)
			if stderr == "" {
				t.Errorf("%q: no error", args)
			}
		}
		for _, args := range [][]string{{"frob" + id}, {"log", id, "--colour" + id}, {"show", id, "1" + id}} {
			check(args, ExitUsage)
		}
		out, _ = check([]string{"rm", id}, ExitOK)
		if strings.Count(out, "\n") != 1 || !strings.Contains(out, idText(id)) {
			t.Errorf("rm prints %q; want one line naming %q", out, idText(id))
		}
		check([]string{"rm", paused, "--json"}, ExitOK)
	})
}

// A 64 KB thread id is cut short in plain output (threads, run's hints, rm)
// and kept whole in --json.
func TestLongIDsClippedInOutput(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 64<<10)
	eachStore(t, func(t *testing.T, db string) {
		for _, args := range [][]string{
			{"run", "--thread", long, "--input", "where is SO20260901?", "--interrupt-before", "executor"},
			{"threads"}, {"prune", long, "--keep-last", "1"}, {"discard", long}, {"rm", long},
		} {
			code, out, stderr := run(t, append(args, "--store", db)...)
			if code != ExitOK {
				t.Fatalf("%s: exit %d: %.300s", args[0], code, stderr)
			}
			for _, line := range strings.Split(out, "\n") {
				if len(line) > 300 {
					t.Errorf("%s prints a %d-byte line: %.200s…", args[0], len(line), line)
				}
			}
			if args[0] == "run" {
				_, out, _ = run(t, "threads", "--json", "--store", db)
				if !strings.Contains(out, `"id": "`+long+`"`) {
					t.Errorf("threads --json does not hold the whole id")
				}
			}
		}
	})
}
