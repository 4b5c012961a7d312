package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/tui/termtext"
)

// Issue 32, item 3: what a person or an editor types holds at most 64 KB
// (termtext.MaxInput) wherever it is given: a value saved in $EDITOR as
// --value-file's, a --value, a reject or cancel --reason. A longer one is a
// usage error and stores nothing.
func TestTypedInputIsBounded(t *testing.T) {
	if engine.MaxEditValue != termtext.MaxInput {
		t.Fatalf("engine.MaxEditValue %d, termtext.MaxInput %d: one limit", engine.MaxEditValue, termtext.MaxInput)
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "b.db")
	if code, out, stderr := run(t, "run", "--store", db, "--thread", "b", "--input", "Where is my parcel SO20260901?", "--draft", "--auth-ttl", "1h"); code != ExitOK {
		t.Fatalf("run: %d %s %s", code, out, stderr)
	}
	log := func() string { _, out, _ := run(t, "log", "--store", db, "b"); return out }
	before := log()
	long := strings.Repeat("x", termtext.MaxInput+1)
	t.Setenv("VISUAL", "")
	// The editor saves a JSON string of 64 KB and 3 bytes.
	t.Setenv("EDITOR", `f() { printf '"%s"' "$(head -c 65537 /dev/zero | tr '\0' x)" > "$1"; }; f`)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"edit in $EDITOR", []string{"edit", "--store", db, "b", "1", "messages"}, "longer than the 64 KB (65536 bytes) one value may hold"},
		{"edit --value", []string{"edit", "--store", db, "b", "1", "messages", "--value", `"` + long + `"`}, "longer than the 64 KB (65536 bytes) one value may hold"},
		{"reject --reason", []string{"reject", "--store", db, "b", "--reason", long}, "--reason is 64 KB (65537 bytes), over the 64 KB (65536 bytes)"},
		{"cancel --reason", []string{"cancel", "--store", db, "b", "--reason", long}, "--reason is 64 KB (65537 bytes), over the 64 KB (65536 bytes)"},
	} {
		code, _, stderr := run(t, tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%s: exit %d %.300s\nwant 2 and one line with %q", tc.name, code, stderr, tc.want)
		}
	}
	if after := log(); after != before {
		t.Fatalf("refused input changed the thread:\n%s\nthen\n%s", before, after)
	}
	// A reason within the limit is taken.
	if code, _, stderr := run(t, "reject", "--store", db, "b", "--reason", long[1:]); code != ExitOK {
		t.Fatalf("reject with a 64 KB reason: %d %.300s", code, stderr)
	}
}

// A channel whose value is over the limit as JSON cannot be edited whole:
// edit says so before it opens the editor.
func TestEditOfAnOversizedChannelOpensNoEditor(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "o.db")
	text := strings.Repeat("where is my parcel SO20260901? ", 2100) // 63 KB, under the message limit
	if code, out, stderr := run(t, "run", "--store", db, "--thread", "o", "--input", text); code != ExitOK {
		t.Fatalf("run: %d %s %.300s", code, out, stderr)
	}
	t.Setenv("VISUAL", "")
	opened := filepath.Join(t.TempDir(), "opened")
	t.Setenv("EDITOR", "touch "+opened)
	code, _, stderr := run(t, "edit", "--store", db, "o", "6", "messages")
	if code != ExitFail || !strings.Contains(stderr, "cannot be edited whole") || !strings.Contains(stderr, "nothing was stored") {
		t.Fatalf("edit of a channel over 64 KB: exit %d %.300s", code, stderr)
	}
	if _, err := os.Stat(opened); err == nil {
		t.Fatal("the editor was opened on a value that cannot be stored")
	}
}
