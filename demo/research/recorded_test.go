package research_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"

	"rewind/cli/app/modelflags"
	"rewind/demo/research"
	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/model/openai/openaitest"
	"rewind/engine/model/replay"
)

var updateDemo = flag.Bool("update-demo", false, "record demo/recorded/research-1.json again against the fake OpenAI-compatible server")

// recording is the shipped recording of the research graph's session
// (demo/README.md: "The research assistant, recorded").
const recording = "../recorded/research-1.json"

// session runs the recorded session with m on a fresh SQLite file: the
// question to the gate, a revise answer (the writer's second loop), an
// approve answer; it returns the published answer.
func session(t *testing.T, m model.Model) string {
	t.Helper()
	ctx := context.Background()
	e := newEngine(t, m)
	if res := run(t, e, "research-1", research.Question); res.Status != engine.RunAwaitingApproval {
		t.Fatalf("the question: %s, want awaiting-approval", res.Status)
	}
	for _, r := range []research.Review{{Decision: research.Revise, Note: research.ReviseNote}, {Decision: research.Approve}} {
		if _, err := e.Answer(ctx, "research-1", research.Answer(r), engine.RunConfig{}); err != nil {
			t.Fatalf("answer %s: %v", r.Decision, err)
		}
	}
	head, err := e.Latest(ctx, "research-1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := research.Decode(head.Values)
	if err != nil {
		t.Fatal(err)
	}
	return s.Published
}

// TestRecordedSessionReplays replays demo/recorded/research-1.json through
// the CLI's model constructor (--replay), offline: every exchange is asked
// for, and the answer published is the one the recorded model wrote. With
// -update-demo it first records the session again through the
// OpenAI-compatible provider (--provider openai --record) against the fake
// server, the research mock as its brain: no real endpoint is reachable
// where it is made.
func TestRecordedSessionReplays(t *testing.T) {
	ctx := context.Background()
	if *updateDemo {
		srv := openaitest.NewServer(research.Brain)
		defer srv.Close()
		if err := os.Remove(recording); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		env := map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_MODEL": "openaitest-research"}
		m, err := modelflags.Build(ctx, modelflags.Options{Provider: modelflags.OpenAI, Record: recording, Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		session(t, m)
		t.Logf("recorded %d exchanges to %s", len(srv.Requests()), recording)
	}
	m, err := modelflags.Build(ctx, modelflags.Options{Replay: recording})
	if err != nil {
		t.Fatal(err)
	}
	published := session(t, m)
	rp := m.(*replay.Replayer)
	if n := len(rp.Unused()); n != 0 || rp.Len() != 9 {
		t.Errorf("%d of %d recorded exchanges never asked for; want all 9 (plan, 3 searches, 2 writer rounds, 3 after the revision)", n, rp.Len())
	}
	if !strings.Contains(rp.Source(), "openai-compatible server") {
		t.Errorf("the recording's source is %q: it was not made through the OpenAI-compatible provider", rp.Source())
	}
	// The same session with the mock publishes the same answer: the
	// recording went through the wire and back unchanged.
	if want := session(t, research.NewMock()); published != want || !strings.Contains(published, "(revised: "+research.ReviseNote+")") {
		t.Errorf("replayed answer:\n%s\nthe mock's:\n%s", published, want)
	}
}
