package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"rewind/tui/termtext"
)

// A message up to termtext.MaxInput (the TUI's limit too) is stored whole,
// from --input or --input-file; a longer one is refused whole (exit 2, one
// line naming the limit), never cut, and nothing is stored.
func TestLongInputUpToTheLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Multi-byte text: the limit is in bytes.
	full := strings.Repeat("où est SO20260901? ", termtext.MaxInput)[:termtext.MaxInput-1] + "."
	if !utf8.ValidString(full) || len(full) != termtext.MaxInput {
		t.Fatalf("fixture: %d bytes", len(full))
	}
	atLimit := file("full.txt", full+"\n") // a file's final newline is not part of the message
	over := file("over.txt", full+"x")
	huge := file("huge.txt", strings.Repeat("y", 1<<20))
	latin1 := file("latin1.txt", "caf\xe9")
	eachStore(t, func(t *testing.T, db string) {
		content := func(thread string) string {
			t.Helper()
			code, out, stderr := run(t, "show", thread, "1", "--json", "--store", db)
			if code != ExitOK {
				t.Fatalf("show %s: %s", thread, stderr)
			}
			var v struct {
				State struct {
					Messages []struct{ Content string } `json:"messages"`
				} `json:"state"`
			}
			if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.State.Messages) == 0 {
				t.Fatalf("show --json: %v", err)
			}
			return v.State.Messages[0].Content
		}
		for name, args := range map[string][]string{
			"file":  {"run", "--thread", "file", "--input-file", atLimit, "--interrupt-before", "planner"},
			"input": {"run", "--thread", "input", "--input", full, "--interrupt-before", "planner"},
		} {
			if code, _, stderr := run(t, append(args, "--store", db)...); code != ExitOK {
				t.Fatalf("%s: a %d-byte message: exit %d: %.300s", name, len(full), code, stderr)
			}
			if got := content(name); got != full {
				t.Errorf("%s: stored %d bytes, want the %d given", name, len(got), len(full))
			}
		}
		if code, _, stderr := run(t, "fork", "file", "1", "--input-file", atLimit, "--interrupt-before", "planner", "--store", db); code != ExitOK {
			t.Fatalf("fork --input-file: %s", stderr)
		}
		for name, c := range map[string]struct {
			args []string
			want string
		}{
			"one byte over":   {[]string{"run", "--thread", "x", "--input", full + "x"}, "65537 bytes"},
			"a file one over": {[]string{"run", "--thread", "x", "--input-file", over}, "longer than the 64 KB"},
			"a 1 MB file":     {[]string{"run", "--thread", "x", "--input-file", huge}, "longer than the 64 KB"},
			"fork over":       {[]string{"fork", "file", "1", "--input", full + "x"}, "65537 bytes"},
			"both":            {[]string{"run", "--thread", "x", "--input", "hi", "--input-file", atLimit}, "not both"},
			"no such file":    {[]string{"run", "--thread", "x", "--input-file", filepath.Join(dir, "nope")}, "readable file"},
			"not UTF-8":       {[]string{"run", "--thread", "x", "--input-file", latin1}, "UTF-8"},
			"empty file":      {[]string{"run", "--thread", "x", "--input-file", file("empty.txt", "\n")}, "--input-file PATH"},
			"a directory":     {[]string{"run", "--thread", "x", "--input-file", dir}, "--input-file"},
		} {
			code, _, stderr := run(t, append(c.args, "--store", db)...)
			if code != ExitUsage || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("%s: exit %d, %q; want exit 2, one line saying %q", name, code, stderr, c.want)
			}
		}
		if _, out, _ := run(t, "threads", "--json", "--store", db); strings.Count(out, `"id"`) != 2 {
			t.Errorf("a refused message stored a thread: %s", out)
		}
	})
}
