package cli

import (
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
)

// A run's progress says an event whose data does not decode, instead of
// printing it as zeros.
func TestObserveSaysAnEventThatDoesNotDecode(t *testing.T) {
	var out strings.Builder
	see := observe(&out)
	see(engine.Event{Type: engine.EventRechecked, Data: []byte(`{"reason":"the sources changed","next":"executor"}`)})
	see(engine.Event{Type: ticket.EventGrantAttached, Data: []byte(`{"ref":["g-1"]}`)})
	see(engine.Event{Type: engine.EventCheckpointSaved, Checkpoint: 4})
	got := out.String()
	for _, want := range []string{
		"↻ the sources changed: redispatched executor\n",
		"! the approval.grant event's data does not decode: json: cannot unmarshal array",
		"! the checkpoint.saved event has no data\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("progress lacks %q:\n%s", want, got)
		}
	}
}
