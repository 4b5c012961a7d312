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
