package model

import (
	"encoding/json"
	"testing"
)

// Each answer shape a chat model gives when asked for JSON in the prompt
// alone yields the JSON among its candidates; the first candidate that
// decodes is the JSON, not the prose's own braces.
func TestCandidatesFindTheJSON(t *testing.T) {
	const want = `{"subtasks":[{"id":"t-1","goal":"find {the} \"order} SO1"}]}`
	for name, text := range map[string]string{
		"bare":             want,
		"padded":           "\n  " + want + "\n",
		"fenced":           "Here is the plan:\n\n```json\n" + want + "\n```\n\nEach goal names the order.",
		"fence, no tag":    "```\n" + want + "```",
		"embedded":         "Sure! " + want + " Let me know {if} that works.",
		"braces before it": "The format is {id, goal}: " + want,
		"two fences":       "```text\nnot json\n```\n```json\n" + want + "\n```",
	} {
		got := ""
		for _, c := range Candidates(text) {
			var v struct {
				Subtasks []struct{ ID, Goal string }
			}
			if json.Unmarshal([]byte(c), &v) == nil && len(v.Subtasks) > 0 {
				got = c
				break
			}
		}
		if got != want {
			t.Errorf("%s: decoded %q from candidates %q", name, got, Candidates(text))
		}
	}
	if c := Candidates("no json here, just {prose"); len(c) != 1 {
		t.Errorf("prose with an unclosed brace: %q, want only the text itself", c)
	}
	if c := Candidates("   "); len(c) != 0 {
		t.Errorf("blank: %q", c)
	}
}
