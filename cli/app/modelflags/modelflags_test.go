package modelflags_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"rewind/cli/app/modelflags"
	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/model/openai"
	"rewind/engine/model/openai/openaitest"
	"rewind/engine/model/replay"
	"rewind/engine/ticket"
	"rewind/store/memory"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func mock() (model.Model, error) { return ticket.NewMock(), nil }

func TestBadCombinationsAreUsageErrors(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "r.json")
	for _, c := range []struct {
		name string
		o    modelflags.Options
		want string
	}{
		{"unknown flag", modelflags.Options{Provider: "claude"}, `--provider "claude" is not a provider`},
		{"unknown env", modelflags.Options{Getenv: env(map[string]string{"REWIND_PROVIDER": "gpt"})}, `REWIND_PROVIDER "gpt"`},
		{"record and replay", modelflags.Options{Record: rec, Replay: rec}, "--record and --replay together"},
		{"replay with openai", modelflags.Options{Provider: "openai", Replay: rec}, "--provider openai would not be used"},
		{"replay with mock flags", modelflags.Options{Replay: rec, MockFlags: []string{"--mock-fail"}}, "drop --mock-fail"},
		{"openai with mock flags", modelflags.Options{Provider: "openai", MockFlags: []string{"--mock-latency", "--mock-fail"}}, "--mock-latency and --mock-fail are for the mock model, not for the openai provider: drop"},
		{"unknown json mode", modelflags.Options{Provider: "openai", JSONMode: "yaml"}, `--json-mode "yaml" is not a JSON mode: choose schema, object, prompt`},
		{"json mode with the mock", modelflags.Options{JSONMode: "object"}, "which the mock does not send: use it with --provider openai"},
		{"json mode with replay", modelflags.Options{Replay: rec, JSONMode: "prompt", Getenv: env(map[string]string{"REWIND_PROVIDER": "openai"})}, "which --replay does not send"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.o.NewMock = mock
			_, err := modelflags.Build(context.Background(), c.o)
			if !errors.Is(err, modelflags.ErrUsage) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want a usage error with %q", err, c.want)
			}
		})
	}
	if _, err := os.Stat(rec); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused combination wrote %s", rec)
	}
}

func TestBuildChoosesTheModel(t *testing.T) {
	ctx := context.Background()
	m, err := modelflags.Build(ctx, modelflags.Options{NewMock: mock})
	if _, ok := m.(*model.Mock); err != nil || !ok {
		t.Errorf("default: %T %v, want the mock", m, err)
	}
	srv := openaitest.NewServer(openaitest.Echo)
	defer srv.Close()
	local := map[string]string{"REWIND_PROVIDER": "openai", "OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_MODEL": "llama"}
	m, err = modelflags.Build(ctx, modelflags.Options{Getenv: env(local), NewMock: mock})
	if _, ok := m.(*openai.Provider); err != nil || !ok {
		t.Fatalf("REWIND_PROVIDER=openai: %T %v", m, err)
	}
	if _, err := m.Complete(ctx, model.Simple(model.RoleReply, "", "hi")); err != nil {
		t.Errorf("local server without a key: %v", err)
	}
	if _, err := modelflags.Build(ctx, modelflags.Options{Provider: "openai", Getenv: env(nil), NewMock: mock}); err == nil || errors.Is(err, modelflags.ErrUsage) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("openai without configuration: %v, want a configuration error naming OPENAI_API_KEY", err)
	}
	noModel := map[string]string{"OPENAI_BASE_URL": srv.BaseURL()}
	if _, err := modelflags.Build(ctx, modelflags.Options{Provider: "openai", Getenv: env(noModel), NewMock: mock}); err == nil || !strings.Contains(err.Error(), "OPENAI_MODEL") {
		t.Errorf("openai without a model: %v", err)
	}

	// --record wraps whichever model, and names it without its address.
	path := filepath.Join(t.TempDir(), "r.json")
	m, err = modelflags.Build(ctx, modelflags.Options{Getenv: env(local), Record: path, NewMock: mock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Complete(ctx, model.Simple(model.RoleReply, "", "hi")); err != nil {
		t.Fatal(err)
	}
	f, err := replay.Load(ctx, path)
	if err != nil || len(f.Exchanges) != 1 || !strings.Contains(f.Source, "reply=llama") || strings.Contains(f.Source, "127.0.0.1") {
		t.Errorf("recording %+v %v", f, err)
	}
	// $REWIND_PROVIDER=openai gives way to --replay (a class machine may
	// have it set); the server is not asked.
	before := len(srv.Requests())
	m, err = modelflags.Build(ctx, modelflags.Options{Getenv: env(local), Replay: path, NewMock: mock})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := m.Complete(ctx, model.Simple(model.RoleReply, "", "hi")); err != nil || resp.Text != "echo: hi" || len(srv.Requests()) != before {
		t.Errorf("replay: %q %v", resp.Text, err)
	}
}

var updateDemo = flag.Bool("update-demo", false, "record demo/recorded/*.json again against the fake server")

const demoReadme = "../../../demo/README.md"

// The shipped recordings, one per scenario.
var demoFiles = []string{"ticket-1.json", "site-log-1.json"}

type demoTurn struct{ thread, scenario, input string }

var demoCommand = regexp.MustCompile(`(?m)^go run \. run --thread (\S+)(?: --scenario (\S+))? --input "([^"]+)" --replay demo/recorded/(\S+\.json)\s*$`)

// demoTurns reads the commands demo/README.md tells a class to run with
// recording file, so the README cannot drift from the recording either.
func demoTurns(t *testing.T, file string) []demoTurn {
	t.Helper()
	b, err := os.ReadFile(demoReadme)
	if err != nil {
		t.Fatal(err)
	}
	var out []demoTurn
	for _, m := range demoCommand.FindAllStringSubmatch(string(b), -1) {
		if m[4] == file {
			out = append(out, demoTurn{m[1], m[2], m[3]})
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s has no `go run . run --thread T --input \"…\" --replay demo/recorded/%s` line", demoReadme, file)
	}
	return out
}

// runDemo runs the turns in one fresh store with the model the CLI builds
// from opts, and returns the final state.
func runDemo(t *testing.T, opts modelflags.Options, turns []demoTurn) (ticket.State, map[string]int) {
	t.Helper()
	ctx := context.Background()
	m, err := modelflags.Build(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(memory.New(), ticket.NewGraph(), m)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	var last engine.Result
	for _, turn := range turns {
		res, err := e.Run(ctx, turn.thread, ticket.Turn{Text: turn.input, Scenario: turn.scenario}.Writes(), engine.RunConfig{})
		if err != nil || res.Status != "done" {
			t.Fatalf("turn %q: %s %v", turn.input, res.Status, err)
		}
		model.Counts(calls).Add(res.ModelCalls)
		last = res
	}
	cp, err := e.Latest(ctx, last.Thread)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ticket.Decode(cp.Values)
	if err != nil {
		t.Fatal(err)
	}
	if rp, ok := m.(*replay.Replayer); ok && len(rp.Unused()) != 0 {
		t.Errorf("%d recorded exchanges never asked for: the README's turns and the recording disagree", len(rp.Unused()))
	}
	return s, calls
}

// TestShippedDemoReplays replays demo/recorded/ticket-1.json through the
// CLI's constructor with the README's own commands, offline.
func TestShippedDemoReplays(t *testing.T) {
	for _, file := range demoFiles {
		t.Run(file, func(t *testing.T) { replayShipped(t, file) })
	}
}

func replayShipped(t *testing.T, file string) {
	turns := demoTurns(t, file)
	demoFile := "../../../demo/recorded/" + file
	if *updateDemo {
		srv := openaitest.NewServer(openaitest.TicketBrain)
		defer srv.Close()
		if err := os.Remove(demoFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		runDemo(t, modelflags.Options{Provider: modelflags.OpenAI, Record: demoFile, Getenv: env(map[string]string{
			"OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_MODEL": "openaitest-ticket-brain", "REWIND_MODEL_SUMMARIZER": "openaitest-ticket-brain-small",
		})}, turns)
		t.Logf("recorded %d exchanges to %s", len(srv.Requests()), demoFile)
	}
	s, calls := runDemo(t, modelflags.Options{Replay: demoFile, Getenv: env(map[string]string{"REWIND_PROVIDER": "openai"})}, turns)
	t.Logf("replayed %d turns: %d model calls (%s), %d verbatim messages, summary %t", len(turns), model.Counts(calls).Sum(), model.Counts(calls), len(s.Messages), s.Summary != nil)
	last := s.Messages[len(s.Messages)-1]
	signature, tools := "Kind regards", map[string]string{"order": "lookup_order", "shipping": "shipping_events", "refund": "refund_policy"}
	if s.Scenario == ticket.ScenarioSiteLog {
		signature, tools = "Site manager", map[string]string{"excavation": "site_survey", "concrete": "batch_ticket", "change": "change_orders", "inspection": "inspection_log", "weather": "weather_log"}
	}
	if last.Speaker != "reply" || !strings.Contains(last.Content, signature) {
		t.Errorf("last message %+v, want the recorded reply", last)
	}
	// Each finding cites its own tool, and the reply passes them on: the
	// recording answers each role as that role.
	for _, st := range s.Subtasks {
		if tool := tools[st.Topic]; tool == "" || st.Status != ticket.StatusApproved || !strings.Contains(st.Result, tool) || !strings.Contains(last.Content, st.Result) {
			t.Errorf("subtask %s [%s] %s: %q", st.ID, st.Topic, st.Status, st.Result)
		}
	}
	if len(turns) > 1 && s.Summary == nil {
		t.Error("the second turn did not compact history: the demo no longer shows the summary panel")
	}
}

// Without a model named, OpenAI's API gets the documented default and a
// local server its only model; either way the CLI is told which. --json-mode
// reaches the provider.
func TestBuildPicksADefaultModelAndSaysWhich(t *testing.T) {
	ctx := context.Background()
	var notes []string
	notify := func(s string) { notes = append(notes, s) }
	m, err := modelflags.Build(ctx, modelflags.Options{Provider: "openai", Getenv: env(map[string]string{"OPENAI_API_KEY": "sk-x"}), Notify: notify})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(*openai.Provider).Models()[model.RoleCritic]; got != openai.DefaultModel || len(notes) != 1 || !strings.Contains(notes[0], "using "+openai.DefaultModel) {
		t.Fatalf("critic model %q, notes %q", got, notes)
	}

	srv := openaitest.NewServer(openaitest.TicketBrain)
	defer srv.Close()
	srv.SetModels([]string{"qwen2.5:7b"})
	notes = nil
	m, err = modelflags.Build(ctx, modelflags.Options{Provider: "openai", JSONMode: model.JSONObject, Notify: notify, Getenv: env(map[string]string{"OPENAI_BASE_URL": srv.BaseURL()})})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], `using "qwen2.5:7b", the only model`) {
		t.Fatalf("notes %q", notes)
	}
	resp, err := m.Complete(ctx, withJSON(model.Simple(model.RolePlanner, "You are the planner.", "REQUEST: where is SO20260901?"), &model.Schema{Name: "plan", Schema: []byte(`{"type":"object"}`)}))
	last := srv.Requests()[len(srv.Requests())-1]
	if err != nil || resp.JSONMode != model.JSONObject || last.ResponseFormat != "json_object" || last.Model != "qwen2.5:7b" {
		t.Fatalf("mode %q, sent %q to %q, %v", resp.JSONMode, last.ResponseFormat, last.Model, err)
	}
	srv.SetModels([]string{"a", "b"})
	if _, err := modelflags.Build(ctx, modelflags.Options{Provider: "openai", Getenv: env(map[string]string{"OPENAI_BASE_URL": srv.BaseURL()})}); err == nil || !strings.Contains(err.Error(), `offers 2 models ("a", "b")`) || errors.Is(err, modelflags.ErrUsage) {
		t.Fatalf("two models: %v", err)
	}
}

func withJSON(r model.Request, s *model.Schema) model.Request {
	r.JSON = s
	return r
}
