package ticket

import (
	"encoding/json"
	"testing"

	"rewind/engine"
)

// measureMessages counts what Decode and EstimateTokens count, and
// refuses what Decode refuses.
func TestMeasureMessagesIsDecode(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		``, `null`, `[]`,
		`[{"index":1,"role":"user","speaker":"user","content":"héllo \u00e9 \"x\" <y>"},{"Content":"case","role":"x"},{"content":"a","content":"bb"}]`,
	} {
		v := engine.Values{"messages": json.RawMessage(raw)}
		n, tokens, ok := measureMessages(v)
		s, err := Decode(v, "messages")
		if err != nil || !ok {
			t.Fatalf("%s: measured %v, decode %v", raw, ok, err)
		}
		if n != len(s.Messages) || tokens != EstimateTokens(s.Messages) {
			t.Errorf("%s: measured %d, %d; decoded %d, %d", raw, n, tokens, len(s.Messages), EstimateTokens(s.Messages))
		}
	}
	for _, raw := range []string{`[{"index":"one","content":"x"}]`, `[{"content":1}]`, `{"content":"x"}`} {
		if _, _, ok := measureMessages(engine.Values{"messages": json.RawMessage(raw)}); ok {
			t.Errorf("%s: measured, but it does not decode", raw)
		}
	}
}
