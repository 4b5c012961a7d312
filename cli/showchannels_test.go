package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"rewind/engine"
)

// TestShowChannelsCutsAtACharacter: a long channel of another graph is
// cut for `rewind show` at a character's start, so a question in French
// or Japanese ends in "…", not in ⟨0xC3⟩ (half an é shown as a byte).
func TestShowChannelsCutsAtACharacter(t *testing.T) {
	for _, prefix := range []string{"", "a", "aa"} {
		q, _ := json.Marshal(prefix + strings.Repeat("é", 150))
		var out bytes.Buffer
		printChannels(&out, engine.Values{"question": q}, []string{"question"})
		line := out.String()
		if strings.Contains(line, "⟨0x") || !utf8.ValidString(line) {
			t.Errorf("prefix %q: the cut split a character: %q", prefix, line)
		}
		if !strings.Contains(line, "é…") {
			t.Errorf("prefix %q: want the value cut after a whole é with …, got %q", prefix, line)
		}
	}
}

// TestShowChannelsNamesAChannelNotStored: a declared channel a checkpoint
// does not store (stored before the graph declared it) reads "not
// stored", not a JSON parser's complaint about its own input.
func TestShowChannelsNamesAChannelNotStored(t *testing.T) {
	var out bytes.Buffer
	printChannels(&out, engine.Values{"question": json.RawMessage(`"q"`)}, []string{"question", "notes"})
	got := out.String()
	if strings.Contains(got, "not JSON") || !strings.Contains(got, "notes") || !strings.Contains(got, "(not stored)") {
		t.Errorf("a channel the checkpoint does not store: got %q, want it named (not stored)", got)
	}
}
