package worker_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/model/stream"
	"rewind/engine/ticket"
	"rewind/engine/worker"
	"rewind/store/memory"
)

// streamingModel answers like the mock but reports each answer as it is
// "generated": two pieces (the first one shown, then reset as a retry
// would), the whole answer in two halves, then the call's end.
type streamingModel struct{ inner model.Model }

func (s streamingModel) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := s.inner.Complete(stream.Without(ctx), req)
	if listen := stream.Listener(ctx); listen != nil {
		call := stream.NewCall()
		listen(stream.Delta{Call: call, Role: req.Role, Text: "garbled"})
		listen(stream.Delta{Call: call, Role: req.Role, Reset: true})
		text := resp.Text
		for _, c := range resp.ToolCalls { // a tool call shows as it is written
			text += "calling " + c.Name + " " + c.Arguments
		}
		half := len(text) / 2
		listen(stream.Delta{Call: call, Role: req.Role, Text: text[:half]})
		listen(stream.Delta{Call: call, Role: req.Role, Text: text[half:]})
		d := stream.Delta{Call: call, Role: req.Role, Done: true}
		if err != nil {
			d.Err = err.Error()
		}
		listen(d)
	}
	return resp, err
}

func TestServeForwardsModelDeltasAsTheyStream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	e, err := engine.New(st, ticket.NewGraph(), streamingModel{ticket.NewMock()})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	req := worker.Request{Op: worker.OpRun, Thread: "s", Turn: ticket.Turn{Text: sentence}}
	if _, err := worker.Serve(ctx, e, req, &out); err != nil {
		t.Fatal(err)
	}
	type call struct {
		role  string
		text  string
		done  bool
		order int
	}
	calls := map[uint64]*call{}
	var lines []worker.Message
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if _, ok := raw["delta"]; ok && len(raw) != 1 {
			t.Fatalf("a delta line carries only the delta, got %s", sc.Text())
		}
		var m worker.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
		if d := m.Delta; d != nil {
			c := calls[d.Call]
			if c == nil {
				c = &call{role: d.Role, order: len(calls)}
				calls[d.Call] = c
			}
			if c.done {
				t.Fatalf("call %d got a delta after its end: %+v", d.Call, d)
			}
			if d.Reset {
				c.text = ""
			}
			c.text += d.Text
			c.done = d.Done
		}
	}
	if len(lines) == 0 || lines[len(lines)-1].Result == nil {
		t.Fatalf("the last line must be the result, got %+v", lines[len(lines)-1])
	}
	res := lines[len(lines)-1].Result
	total := 0
	for _, n := range res.ModelCalls {
		total += n
	}
	if len(calls) != total || total == 0 {
		t.Fatalf("%d streamed calls for %d model calls", len(calls), total)
	}
	roles := map[string]int{}
	for id, c := range calls {
		if !c.done {
			t.Fatalf("call %d (%s) never ended", id, c.role)
		}
		if c.text == "" || strings.Contains(c.text, "garbled") {
			t.Fatalf("call %d (%s): a reset must drop what was shown, got %q", id, c.role, c.text)
		}
		roles[c.role]++
	}
	if roles[model.RoleExecutor] != res.ModelCalls[model.RoleExecutor] || roles[model.RoleReply] != 1 {
		t.Fatalf("streamed calls by role %v, model calls %v", roles, res.ModelCalls)
	}
	// What streamed is what was stored: the reply's text ends the thread.
	cp, err := e.Latest(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ticket.Decode(cp.Values)
	last := s.Messages[len(s.Messages)-1]
	found := false
	for _, c := range calls {
		found = found || (c.role == model.RoleReply && strings.TrimSpace(c.text) == last.Content)
	}
	if !found {
		t.Fatalf("the streamed reply differs from the stored one %q", last.Content)
	}
}

// A worker that is asked to stop (SIGTERM) ends its run with an error and
// leaves what finished stored.
func TestStopEndsTheWorkerGracefully(t *testing.T) {
	t.Parallel()
	exe := buildRewind(t)
	dir := t.TempDir()
	ctx := context.Background()
	p, err := worker.Start(ctx, exe, []string{"worker", "run", "--thread", "st", "--input", sentence, "--store", "sqlite:" + dir + "/w.db", "--mock-latency", "5s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for m := range p.Messages() {
		if m.Event != nil && m.Event.Type == engine.EventNodeStarted {
			if err := p.Stop(); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	o := collect(p)
	if o.killed || o.code != 1 || !strings.Contains(o.err, "context canceled") {
		t.Fatalf("a stopped worker should exit 1 with the cancellation, got %+v", o)
	}
}
