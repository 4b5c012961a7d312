package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/model/openai"
	"rewind/engine/model/openai/openaitest"
	"rewind/engine/model/replay"
	"rewind/engine/model/stream"
	"rewind/engine/ticket"
	"rewind/store/memory"
)

const (
	turn1 = "My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel now, and can I get a refund if it is lost?"
	turn2 = "Thanks. What is the order status now, where is the parcel, and is the refund still possible?"
)

// runTurns runs the inputs as consecutive turns of one thread in a fresh
// memory store and returns every checkpoint's channel values by id.
func runTurns(t *testing.T, m model.Model, inputs ...string) (map[int64]string, []engine.Result) {
	t.Helper()
	ctx := context.Background()
	st := memory.New()
	e, err := engine.New(st, ticket.NewGraph(), m)
	if err != nil {
		t.Fatal(err)
	}
	var results []engine.Result
	for _, in := range inputs {
		res, err := e.Run(ctx, "class-1", ticket.Input(in), engine.RunConfig{})
		if err != nil {
			t.Fatalf("turn %q: %v", in, err)
		}
		results = append(results, res)
	}
	cps, err := e.History(ctx, "class-1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for _, l := range cps {
		cp, err := e.Get(ctx, "class-1", l.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(cp.Values)
		if err != nil {
			t.Fatal(err)
		}
		out[cp.ID] = string(b)
	}
	return out, results
}

func fakeProvider(t *testing.T, srv *openaitest.Server) *openai.Provider {
	t.Helper()
	cfg := openai.Config{BaseURL: srv.BaseURL(), Models: map[string]string{}, MaxAttempts: 1}
	for _, r := range openai.Roles {
		cfg.Models[r] = "fake-chat"
	}
	p, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRecordThenReplayGivesIdenticalState records two whole ticket turns
// (the second compacts history) against the fake server, closes the
// server, and replays them offline: every checkpoint's state must match.
// The second case records a failed summary call, which replay must fail
// the same way (compaction skipped) for the states to match.
func TestRecordThenReplayGivesIdenticalState(t *testing.T) {
	for _, failSummary := range []bool{false, true} {
		t.Run(fmt.Sprintf("failSummary=%t", failSummary), func(t *testing.T) {
			ctx := context.Background()
			srv := openaitest.NewServer(openaitest.TicketBrain)
			if failSummary {
				srv.FailWhen(func(r openaitest.Request) *openaitest.Fault {
					if strings.Contains(r.System, "compress") {
						return &openaitest.Fault{Status: 400, Message: "context too long"}
					}
					return nil
				})
			}
			path := filepath.Join(t.TempDir(), "ticket.json")
			rec, err := replay.NewRecorder(ctx, fakeProvider(t, srv), path, "fake")
			if err != nil {
				t.Fatal(err)
			}
			recorded, recRes := runTurns(t, rec, turn1, turn2)
			calls := len(srv.Requests())
			srv.Close() // replay must not need it

			rp, err := replay.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if rp.Len() != calls || rec.Len() != calls {
				t.Fatalf("recorded %d/%d exchanges of %d calls", rec.Len(), rp.Len(), calls)
			}
			replayed, repRes := runTurns(t, rp, turn1, turn2)
			if len(recorded) != len(replayed) || len(recorded) < 10 {
				t.Fatalf("%d checkpoints recorded, %d replayed", len(recorded), len(replayed))
			}
			for id, v := range recorded {
				if replayed[id] != v {
					t.Fatalf("checkpoint %d differs:\nrecorded %s\nreplayed %s", id, v, replayed[id])
				}
			}
			if u := rp.Unused(); len(u) != 0 {
				t.Errorf("%d exchanges never asked for", len(u))
			}
			if fmt.Sprint(recRes[1].ModelCalls) != fmt.Sprint(repRes[1].ModelCalls) {
				t.Errorf("calls %v recorded, %v replayed", recRes[1].ModelCalls, repRes[1].ModelCalls)
			}
			var last map[string]json.RawMessage
			_ = json.Unmarshal([]byte(recorded[int64(len(recorded))]), &last)
			hasSummary := string(last["summary"]) != "" && string(last["summary"]) != "null"
			if hasSummary == failSummary {
				t.Errorf("summary present %t with failSummary %t: the run did not take the intended path", hasSummary, failSummary)
			}
		})
	}
}

func TestReplayRefusesAChangedPrompt(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ticket.json")
	rec, err := replay.NewRecorder(ctx, ticket.NewMock(), path, "mock")
	if err != nil {
		t.Fatal(err)
	}
	runTurns(t, rec, turn1)
	rp, err := replay.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := engine.New(memory.New(), ticket.NewGraph(), rp)
	changed := strings.Replace(turn1, "SO20260901", "SO20260902", 1)
	_, err = e.Run(ctx, "class-1", ticket.Input(changed), engine.RunConfig{})
	var me *replay.MismatchError
	if !errors.Is(err, replay.ErrNotRecorded) || !errors.As(err, &me) {
		t.Fatalf("error %v, want a refusal", err)
	}
	t.Log(me)
	if me.Role != model.RolePlanner || me.Call != 1 || me.RoleCall != 1 {
		t.Errorf("refusal names %s call %d (%s call %d)", me.Role, me.Call, me.Role, me.RoleCall)
	}
	for _, w := range []string{"column 28", "SO20260901 hasn't", "SO20260902 hasn't", path, "planner call 1"} {
		if !strings.Contains(me.Error(), w) {
			t.Errorf("%q lacks %q", me.Error(), w)
		}
	}
}

func TestReplayRefusals(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.json")
	var n int
	counting := model.NewMock(model.Text(func(r model.Request) (string, error) { n++; return fmt.Sprintf("answer %d", n), nil }))
	rec, err := replay.NewRecorder(ctx, counting, path, "counting")
	if err != nil {
		t.Fatal(err)
	}
	ask := model.Simple(model.RoleExecutor, "", "SUBTASK t-1: a\nTOOL x({}) RESULT: {\"a\":1}")
	for range 2 {
		if _, err := rec.Complete(ctx, ask); err != nil {
			t.Fatal(err)
		}
	}
	rp, err := replay.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 2; want++ {
		resp, err := rp.Complete(ctx, ask)
		if err != nil || resp.Text != fmt.Sprintf("answer %d", want) {
			t.Fatalf("identical request %d: %q %v, want recorded order", want, resp.Text, err)
		}
	}
	_, err = rp.Complete(ctx, ask)
	if !errors.Is(err, replay.ErrNotRecorded) || !strings.Contains(err.Error(), "2 time(s) and the run asked once more") || !strings.Contains(err.Error(), "call 3 (executor call 3)") {
		t.Errorf("third identical call: %v", err)
	}
	changed := model.Simple(model.RoleExecutor, "", strings.Replace(ask.Prompt(), `{"a":1}`, `{"a":2}`, 1))
	_, err = rp.Complete(ctx, changed)
	// The request as rendered: "[user]", then the prompt's two lines.
	if !errors.Is(err, replay.ErrNotRecorded) || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), `:1}`) || !strings.Contains(err.Error(), `:2}`) {
		t.Errorf("changed second line: %v", err)
	}
	_, err = rp.Complete(ctx, model.Simple(model.RoleCritic, "", "x"))
	if !errors.Is(err, replay.ErrNotRecorded) || !strings.Contains(err.Error(), "no critic call") {
		t.Errorf("unrecorded role: %v", err)
	}
}

func TestRecordedFailureReplaysAsFailure(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.json")
	m := ticket.NewMock()
	m.FailRole(model.RoleSummarizer, -1)
	rec, _ := replay.NewRecorder(ctx, m, path, "mock")
	req := model.Simple(model.RoleSummarizer, "", "#1 user: hi")
	if _, err := rec.Complete(ctx, req); err == nil {
		t.Fatal("mock did not fail")
	}
	rp, _ := replay.Open(ctx, path)
	_, err := rp.Complete(ctx, req)
	if !errors.Is(err, replay.ErrRecordedFailure) || !strings.Contains(err.Error(), "injected model failure") {
		t.Errorf("replayed failure: %v", err)
	}
}

func TestRecorderKeepsOtherFilesAndAppendsToRecordings(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	other := filepath.Join(dir, "notes.txt")
	os.WriteFile(other, []byte("my notes"), 0o644)
	if _, err := replay.NewRecorder(ctx, ticket.NewMock(), other, "mock"); err == nil || !strings.Contains(err.Error(), "left alone") {
		t.Errorf("recording over a non-recording: %v", err)
	}
	if b, _ := os.ReadFile(other); string(b) != "my notes" {
		t.Errorf("file changed to %q", b)
	}
	if _, err := replay.NewRecorder(ctx, ticket.NewMock(), filepath.Join(dir, "missing", "r.json"), "mock"); err == nil || !strings.Contains(err.Error(), "cannot write") {
		t.Errorf("recording into a missing directory: %v", err)
	}

	path := filepath.Join(dir, "r.json")
	req := model.Simple(model.RoleSummarizer, "", "#1 user: hi")
	for i := 1; i <= 2; i++ {
		rec, err := replay.NewRecorder(ctx, ticket.NewMock(), path, "mock")
		if err != nil {
			t.Fatal(err)
		}
		rec.Complete(ctx, req)
		if rec.Len() != i {
			t.Fatalf("session %d: %d exchanges", i, rec.Len())
		}
	}
	// A call the caller cancelled is no answer, so it is not recorded.
	slow := ticket.NewMock()
	slow.Latency = time.Hour
	rec, _ := replay.NewRecorder(ctx, slow, path, "mock")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := rec.Complete(cctx, req); err == nil || rec.Len() != 2 {
		t.Errorf("cancelled call: %v, %d exchanges", err, rec.Len())
	}
	for _, bad := range []string{"{}", "[1]", `{"format":"rewind.recording/v1","exchanges":[{"prompt":"x"}]}`} {
		os.WriteFile(path, []byte(bad), 0o644)
		var fe *replay.FileError
		if _, err := replay.Open(ctx, path); !errors.As(err, &fe) || fe.Op != replay.Replay || !errors.Is(err, replay.ErrFormat) || !strings.Contains(err.Error(), "replay "+path+": not a rewind recording") {
			t.Errorf("open %s: %v", bad, err)
		}
	}
	if _, err := replay.Open(ctx, filepath.Join(dir, "nope.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestReplayStreamsToAListener(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.json")
	rec, _ := replay.NewRecorder(ctx, ticket.NewMock(), path, "mock")
	req := model.Simple(model.RoleSummarizer, "", "#1 user: hello there")
	want, _ := rec.Complete(ctx, req)
	rp, _ := replay.Open(ctx, path)
	var mu sync.Mutex
	var got []stream.Delta
	resp, err := rp.Complete(stream.WithListener(ctx, func(d stream.Delta) { mu.Lock(); got = append(got, d); mu.Unlock() }), req)
	if err != nil || !reflect.DeepEqual(resp, want) {
		t.Fatalf("%+v %v, want %+v", resp, err, want)
	}
	if len(got) != 2 || got[0].Text != want.Text || !got[1].Done || got[0].Role != model.RoleSummarizer {
		t.Errorf("deltas %+v", got)
	}
}

func TestDiff(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"abc", "abd", `at line 1, column 3: recorded "abc", asked "abd"`},
		{"one\ntwo", "one\ntwx", `at line 2, column 3: recorded "one\ntwo", asked "one\ntwx"`},
		{"abc", "abcdef", `at line 1, column 4: recorded "abc" (ends here), asked "abcdef"`},
		{"héllo", "hèllo", `at line 1, column 2: recorded "héllo", asked "hèllo"`},
	} {
		if got := replay.Diff(c.a, c.b); got != c.want {
			t.Errorf("Diff(%q, %q) = %s, want %s", c.a, c.b, got, c.want)
		}
	}
}

// The JSON mode a server accepted is recorded with the exchange and
// reported again on replay, so a replayed run's model.called events say
// how each answer was asked for, as the recorded run's did.
func TestReplayKeepsTheJSONMode(t *testing.T) {
	ctx := context.Background()
	srv := openaitest.NewServer(openaitest.TicketBrain)
	defer srv.Close()
	srv.SetFormats(openaitest.FormatsObject)
	path := filepath.Join(t.TempDir(), "modes.json")
	rec, err := replay.NewRecorder(ctx, fakeProvider(t, srv), path, "fake")
	if err != nil {
		t.Fatal(err)
	}
	runTurns(t, rec, turn1)
	f, err := replay.Load(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]string{}
	for _, x := range f.Exchanges {
		modes[x.Role] += x.JSONMode + " "
	}
	if modes[model.RolePlanner] != "object " || modes[model.RoleCritic] != "object object " || strings.TrimSpace(modes[model.RoleExecutor]+modes[model.RoleReply]) != "" {
		t.Fatalf("recorded modes %q: want object for the planner and each critic call, none for text", modes)
	}
	rp, err := replay.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	x := f.Exchanges[0]
	resp, err := rp.Complete(ctx, model.Request{Role: x.Role, Messages: x.Messages, JSON: &model.Schema{Name: "plan"}})
	if err != nil || resp.JSONMode != x.JSONMode || resp.JSONMode == "" {
		t.Fatalf("replayed %s: mode %q, %v; recorded %q", x.Role, resp.JSONMode, err, x.JSONMode)
	}
}

// A recording of the first format (a system prompt and one prompt a
// call, from before requests carried the conversation) cannot match
// today's requests: it is refused at once, saying to record it again, not
// replayed until its first call fails.
func TestRecordingOfTheFirstFormatIsRefused(t *testing.T) {
	_, err := replay.Open(context.Background(), "testdata/ticket-1-prose.json")
	if err == nil || !strings.Contains(err.Error(), `"rewind.recording/v1"`) || !errors.Is(err, replay.ErrOldFormat) {
		t.Fatalf("opening a v1 recording: %v, want a refusal naming the format and the fix", err)
	}
}
