package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// `rewind search T QUERY`: the thread's messages holding the words, on
// every branch, each with its checkpoint, branch, turn, speaker and the
// match marked; --json the same; bad input refused on one line.
func TestSearchFindsMessagesOnEveryBranch(t *testing.T) {
	t.Parallel()
	db := "sqlite:" + filepath.Join(t.TempDir(), "s.db")
	steps := [][]string{
		{"run", "--store", db, "--thread", "t", "--input", "Where is my parcel SO20260901?"},
		{"run", "--store", db, "--thread", "t", "--input", "Please send the invoice."},
		{"fork", "t", "1", "--store", db, "--input", "Cancel the parcel instead, wombat."},
	}
	for _, args := range steps {
		if code, out, stderr := run(t, args...); code != ExitOK {
			t.Fatalf("%v: %d %s %s", args, code, out, stderr)
		}
	}
	code, out, stderr := run(t, "search", "t", "PARCEL", "--store", db)
	if code != ExitOK {
		t.Fatalf("search: %d %s", code, stderr)
	}
	// The first turn's input is on the head's branch (the fork's); the
	// fork's input is its turn 2, as the second turn's input on the branch
	// it left.
	for _, want := range []string{
		`hold "PARCEL" in t, on every branch:`,
		"@1     head   turn 1    #1     user: Where is my [parcel] SO20260901?",
		"head   turn 2    #2     user: Cancel the [parcel] instead, wombat.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("search t PARCEL: no line %q in:\n%s", want, out)
		}
	}
	code, out, _ = run(t, "search", "t", "invoice", "--store", db, "--json")
	var got struct {
		Hits []struct {
			Checkpoint, Branch, Index int64
			Turn                      int
			Head                      bool
			Speaker, Text, Snippet    string
			Matches                   [][2]int
		}
		More bool
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &got) != nil || len(got.Hits) == 0 {
		t.Fatalf("search --json: %d %s", code, out)
	}
	input := got.Hits[0]
	if input.Text != "Please send the invoice." || input.Turn != 2 || input.Head || input.Branch <= input.Checkpoint ||
		len(input.Matches) != 1 || input.Text[input.Matches[0][0]:input.Matches[0][1]] != "invoice" {
		t.Errorf("search invoice --json: first hit %+v, want the second turn's input, turn 2, on the branch the fork left, invoice matched", input)
	}
	if code, out, _ := run(t, "search", "t", "wombat", "parcel", "--store", db, "--json"); code != ExitOK || strings.Count(out, `"checkpoint"`) != 1 {
		t.Errorf("search t wombat parcel: %d, want the fork's input alone: %s", code, out)
	}
	if code, out, _ := run(t, "search", "t", "parcel", "--limit", "1", "--store", db); code != ExitOK || !strings.Contains(out, "the first 1 messages (--limit)") || strings.Count(out, "\n") != 2 {
		t.Errorf("search --limit 1: %d %q, want one hit said to be the first", code, out)
	}
	if code, out, _ := run(t, "search", "t", "zebra", "--store", db); code != ExitOK || !strings.Contains(out, `no message of t holds "zebra"`) {
		t.Errorf("search for a word nobody said: %d %q", code, out)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"search", "nope", "parcel"}, ExitFail, `thread "nope" not found`},
		{[]string{"search", "t", ""}, ExitUsage, "the query is empty"},
		{[]string{"search", "t", "  ", ""}, ExitUsage, "the query is empty"},
		{[]string{"search", "t", "?!"}, ExitUsage, "no word to find"},
		{[]string{"search", "t"}, ExitUsage, "usage: rewind search T QUERY..."},
		{[]string{"search", "t", "x", "--limit", "-1"}, ExitUsage, `invalid argument "-1" for "--limit" flag: out of range`},
		{[]string{"search", "t", strings.Repeat("w ", 40) + "a b c d e f g h i j k l m n o p q r s t u v x y z 1 2 3 4 5 6 7 8 9"}, ExitUsage, "the query has 35 words: give at most 32"},
	} {
		code, _, stderr := run(t, append(c.args, "--store", db)...)
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d %q, want %d and one line with %q", c.args, code, stderr, c.code, c.want)
		}
	}
}
