package cli

import (
	"regexp"
	"slices"
	"testing"

	"rewind/demo"
	"rewind/tui"
)

// A lesson's step names a key as "K (arm a kill point)": the key must be
// bound to that action in the TUI today (kill moved from x to X once, and
// the scripts must follow such a change).
func TestLessonStepsNameTheTUIsKeys(t *testing.T) {
	keys := tui.LessonKeys()
	// What a step's words in parentheses mean, by the TUI's key names.
	actions := map[string]string{
		"arm a kill point": "drill", "resume": "resume", "approve": "approve", "draft turn": "draft",
		"State tab": "tab_state", "Inspector": "tab_inspector", "Conversation": "tab_conversation",
		"asks y/n": "kill", "last checkpoint": "last",
	}
	step := regexp.MustCompile(`(?:^|, |or |then )(ctrl\+[a-z]|\S) \(([^)]+)\)`)
	checked := 0
	for _, l := range demo.Lessons() {
		for _, s := range l.Steps {
			for _, m := range step.FindAllStringSubmatch(s.Do, -1) {
				name, ok := actions[m[2]]
				if !ok {
					continue
				}
				checked++
				if !slices.Contains(keys[name], m[1]) {
					t.Errorf("lesson %s: %q says %s for %q, but the TUI binds %v to it (tui/keys.go)", l.Name, s.Do, m[1], m[2], keys[name])
				}
			}
		}
	}
	if checked < 6 {
		t.Errorf("only %d keys checked in the lessons' steps: has the steps' form changed?", checked)
	}
}
