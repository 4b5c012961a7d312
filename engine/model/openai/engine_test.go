package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	"rewind/store"
	"rewind/store/memory"
)

const (
	sentinel = "sk-rewind-SENTINEL-7f3a9c21d4e8b605"
	// marker is the key's distinctive middle, so a half-masked echo
	// ("sk-rew…SENTINEL-7f3a…") is caught too.
	marker = "SENTINEL-7f3a9c"

	turn1 = "My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel now, and can I get a refund if it is lost?"
	turn2 = "Thanks. What is the order status now, where is the parcel, and is the refund still possible?"
)

// checkpointText is what the store keeps of one checkpoint: its row,
// blobs and pending writes.
func checkpointText(t *testing.T, st *memory.Store, thread string, id int64) []string {
	t.Helper()
	ctx := context.Background()
	var haystack []string
	cp, err := st.Get(ctx, thread, id)
	if err != nil {
		t.Fatal(err)
	}
	haystack = append(haystack, string(cp.State), string(cp.Meta), string(cp.Rebased))
	blobs, err := st.Blobs(ctx, thread, cp.BlobRefs)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blobs {
		haystack = append(haystack, string(b.Body))
	}
	ws, err := st.Writes(ctx, thread, cp.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		haystack = append(haystack, string(w.Writes))
	}
	return haystack
}

// storedText is every byte the store keeps of its threads (checkpoints,
// blobs, writes, messages, events), for a search, and the threads.
func storedText(t *testing.T, st *memory.Store) ([]string, []store.Thread) {
	t.Helper()
	ctx := context.Background()
	var haystack []string
	threads, err := st.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range threads {
		haystack = append(haystack, th.ID)
		cps, err := st.History(ctx, th.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range cps {
			haystack = append(haystack, checkpointText(t, st, th.ID, row.ID)...)
		}
		// The transcript is stored apart, message by message.
		for idx := int64(0); idx < 200; idx++ {
			ms, err := st.MessagesAt(ctx, th.ID, idx)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				haystack = append(haystack, string(m.Body))
			}
		}
		evs, err := st.Events(ctx, th.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			haystack = append(haystack, ev.Type, string(ev.Payload))
		}
	}
	return haystack, threads
}

// TestSentinelKeyReachesNoStoredOrPrintedByte runs two whole ticket turns
// through the engine against a fake server with a sentinel key. The server
// echoes the key in an error (as real APIs and proxies do), so the failure
// path carries it too; then every checkpoint, write, event, printed line,
// streamed delta and the recording are searched for it.
func TestSentinelKeyReachesNoStoredOrPrintedByte(t *testing.T) {
	ctx := context.Background()
	srv := openaitest.NewServer(openaitest.TicketBrain)
	defer srv.Close()
	srv.FailWhen(func(r openaitest.Request) *openaitest.Fault {
		if strings.Contains(r.System, "compress") {
			return &openaitest.Fault{Status: 500, Message: "upstream refused Authorization: " + r.Authorization}
		}
		return nil
	})
	srv.Fail(openaitest.Fault{Status: 401, Message: "Incorrect API key provided: " + sentinel})

	cfg := openai.Config{BaseURL: srv.BaseURL(), APIKey: sentinel, Models: map[string]string{}, MaxAttempts: 2, Backoff: time.Millisecond}
	for _, r := range openai.Roles {
		cfg.Models[r] = "fake-chat"
	}
	p, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	recording := filepath.Join(t.TempDir(), "rec.json")
	rec, err := replay.NewRecorder(ctx, p, recording, "test")
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	e, err := engine.New(st, ticket.NewGraph(), rec)
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var printed bytes.Buffer
	sctx := stream.WithListener(ctx, func(d stream.Delta) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(&printed, "delta %+v\n", d)
	})
	cfgRun := engine.RunConfig{Observe: func(ev engine.Event) {
		mu.Lock()
		defer mu.Unlock()
		_ = json.NewEncoder(&printed).Encode(ev)
	}}
	// Turn 1 fails on the 401 (the key is refused), then resumes.
	res, err := e.Run(sctx, "t1", ticket.Input(turn1), cfgRun)
	if err == nil {
		t.Fatal("the 401 did not fail the planner")
	}
	fmt.Fprintf(&printed, "%+v\n%v\n", res, err)
	if !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("the server echoed the key but the error shows no redaction: %v", err)
	}
	for i, in := range [][]engine.Write{nil, ticket.Input(turn2)} {
		if in == nil {
			res, err = e.Resume(sctx, "t1", cfgRun)
		} else {
			res, err = e.Run(sctx, "t1", in, cfgRun)
		}
		if err != nil || res.Status != "done" {
			t.Fatalf("turn %d: %s %v", i+1, res.Status, err)
		}
		fmt.Fprintf(&printed, "%+v\n", res)
	}

	// The key was really used, and the failure path was really taken.
	reqs := srv.Requests()
	if len(reqs) < 10 || reqs[0].Authorization != "Bearer "+sentinel {
		t.Fatalf("%d requests, first with %q", len(reqs), reqs[0].Authorization)
	}
	// The run's context listener saw every role's answer stream in.
	for _, role := range []string{"planner", "executor", "critic", "reply"} {
		if !regexp.MustCompile(`Role:` + role + ` Task:[0-9a-f]{16} Text:\S`).MatchString(printed.String()) {
			t.Errorf("no streamed text of the %s reached the listener", role)
		}
	}
	if !strings.Contains(printed.String(), ticket.EventCompactionFailed) {
		t.Fatal("the summarizer's failure did not reach the events: the test did not exercise the error path")
	}

	haystack, threads := storedText(t, st)
	file, err := os.ReadFile(recording)
	if err != nil {
		t.Fatal(err)
	}
	haystack = append(haystack, printed.String(), string(file), fmt.Sprintf("%v %+v %#v", p, p, cfg))
	all := strings.Join(haystack, "\n")
	if len(threads) != 1 || !strings.Contains(all, engine.EventModelCalled) || !strings.Contains(all, "Kind regards") {
		t.Fatalf("searched nothing useful: %d threads, %d bytes", len(threads), len(all))
	}
	for _, needle := range []string{sentinel, marker} {
		if i := strings.Index(all, needle); i >= 0 {
			t.Fatalf("%q found: …%s…", needle, all[max(0, i-120):min(len(all), i+60)])
		}
	}
	t.Logf("searched %d checkpoints/writes/events/lines (%d bytes): no key", len(haystack), len(all))

	// Usage figures come back per role for the engine to aggregate.
	var usage model.Usage
	evs, err := e.Events(ctx, "t1", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type == engine.EventModelCalled {
			var d struct {
				PromptTokens int `json:"promptTokens"`
			}
			_ = json.Unmarshal(ev.Data, &d)
			usage.PromptTokens += d.PromptTokens
		}
	}
	if usage.PromptTokens == 0 {
		t.Error("model.called events carry no token counts")
	}
}
