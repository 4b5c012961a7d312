package telemetry_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"rewind/engine"
	"rewind/engine/telemetry"
	"rewind/engine/telemetry/otlptest"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
)

const sentence = "My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel now, and can I get a refund if it is lost?"

func setEnv(t testing.TB, kv map[string]string) { otlptest.Setenv(t, kv) }

// warnings collects the warning lines FromEnv's pipeline says.
type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (w *warnings) add(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, s)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

// run runs one traced invocation of op on e, as the CLI does.
func run(ctx context.Context, t *testing.T, sig *telemetry.Telemetry, e *engine.Engine, op, thread string, cfg engine.RunConfig,
	do func(engine.RunConfig) (engine.Result, error)) (engine.Result, error) {
	t.Helper()
	r := sig.Start(ctx, e, telemetry.RunInfo{Op: op, Thread: thread}, &cfg)
	res, err := do(cfg)
	r.End(ctx, res, err)
	return res, err
}

// A real turn on the mock model reaches a collector on loopback as one
// trace (run → superstep → task → model call and tool call, each with the
// thread and checkpoint), and its counters; a run fenced out mid-run and
// one refused by the thread's lock show in theirs.
func TestSignalsReachACollector(t *testing.T) {
	col := otlptest.New(t)
	setEnv(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL(), "OTEL_SERVICE_NAME": "rewind-test"})
	ctx := context.Background()
	var warned warnings
	sig := telemetry.FromEnv(ctx, "test", warned.add)
	if sig == nil {
		t.Fatal("OTEL_EXPORTER_OTLP_ENDPOINT is set, yet FromEnv built nothing")
	}
	st := memory.New()
	e, err := ticket.NewEngine(st, ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(ctx, t, sig, e, "run", "t-ok", engine.RunConfig{}, func(cfg engine.RunConfig) (engine.Result, error) {
		return e.Run(ctx, "t-ok", ticket.Input(sentence), cfg)
	})
	if err != nil || res.Status != engine.RunDone {
		t.Fatalf("the turn: %v, %+v", err, res)
	}
	// A newer writer fences the thread just before the run's next commit:
	// the run's late write is refused.
	fenced := false
	hook := func(p engine.HookPoint, info engine.HookInfo) {
		if p == engine.HookBeforeCommit && !fenced {
			fenced = true
			if _, err := st.Fence(ctx, info.Thread); err != nil {
				t.Error(err)
			}
		}
	}
	_, err = run(ctx, t, sig, e, "run", "t-fenced", engine.RunConfig{Hook: hook}, func(cfg engine.RunConfig) (engine.Result, error) {
		return e.Run(ctx, "t-fenced", ticket.Input(sentence), cfg)
	})
	if !errors.Is(err, store.ErrFenced) {
		t.Fatalf("a run fenced mid-run: %v", err)
	}
	// Another process holds the thread: the run is refused.
	unlock, err := st.Lock(ctx, "t-ok")
	if err != nil {
		t.Fatal(err)
	}
	_, err = run(ctx, t, sig, e, "run", "t-ok", engine.RunConfig{}, func(cfg engine.RunConfig) (engine.Result, error) {
		return e.Run(ctx, "t-ok", ticket.Input("and again?"), cfg)
	})
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("a run on a held thread: %v", err)
	}
	unlock()
	sig.Shutdown(ctx)
	if w := warned.all(); len(w) != 0 {
		t.Errorf("warnings with a working collector: %q", w)
	}

	runs, err := e.Runs(ctx, "t-ok")
	if err != nil {
		t.Fatal(err)
	}
	checkTree(t, col.Spans(), res, runs.ByCheckpoint[res.Checkpoint])
	if got := col.Resource()["service.name"]; got != "rewind-test" {
		t.Errorf("service.name %q, want OTEL_SERVICE_NAME's", got)
	}
	calls := 0
	for _, n := range res.ModelCalls {
		calls += n
	}
	for _, c := range []struct {
		name  string
		attrs map[string]string
		want  float64
	}{
		{telemetry.MetricRuns, map[string]string{"rewind.status": "done"}, 1},
		{telemetry.MetricRuns, map[string]string{"rewind.status": "fenced"}, 1},
		{telemetry.MetricRuns, map[string]string{"rewind.status": "refused"}, 1},
		{telemetry.MetricWritesRefused, nil, 1},
		{telemetry.MetricConflicts, map[string]string{"rewind.conflict": "locked"}, 1},
		// The first run on each new thread fenced it; the refused run did not.
		{telemetry.MetricFences, nil, 2},
		{telemetry.MetricModelErrors, nil, 0},
	} {
		if got := col.Sum(c.name, c.attrs); got != c.want {
			t.Errorf("%s %v = %v, want %v", c.name, c.attrs, got, c.want)
		}
	}
	// The fenced run made model calls too before its commit was refused.
	if got := col.Sum(telemetry.MetricModelCalls, nil); got < float64(calls) {
		t.Errorf("%s = %v, want at least the turn's %d", telemetry.MetricModelCalls, got, calls)
	}
	if got := col.Sum(telemetry.MetricModelDuration, map[string]string{"rewind.role": "planner"}); got < 1 {
		t.Errorf("no planner call in %s", telemetry.MetricModelDuration)
	}
	in := col.Sum(telemetry.MetricModelTokens, map[string]string{"rewind.token.type": "input"})
	out := col.Sum(telemetry.MetricModelTokens, map[string]string{"rewind.token.type": "output"})
	if in < float64(res.Usage.PromptTokens) || out < float64(res.Usage.CompletionTokens) || out == 0 {
		t.Errorf("tokens in %v out %v, want at least the turn's %+v", in, out, res.Usage)
	}
}

// checkTree checks the trace of the turn that ended at res: its spans'
// parents and attributes; runID is the run the turn stored.
func checkTree(t *testing.T, spans []*tracepb.Span, res engine.Result, runID string) {
	t.Helper()
	byID := map[string]*tracepb.Span{}
	var root *tracepb.Span
	for _, s := range spans {
		byID[otlptest.ID(s.SpanId)] = s
		if s.Name == "rewind run" && otlptest.Attrs(s.Attributes)["rewind.thread"] == "t-ok" && otlptest.Attrs(s.Attributes)["rewind.status"] == "done" {
			root = s
		}
	}
	if root == nil {
		t.Fatalf("no root span of the turn among %d spans", len(spans))
	}
	if len(root.ParentSpanId) != 0 {
		t.Errorf("the run span has a parent")
	}
	if got := otlptest.Attrs(root.Attributes)["rewind.checkpoint"]; got != itoa(res.Checkpoint) {
		t.Errorf("run span checkpoint %s, want %d", got, res.Checkpoint)
	}
	parentOf := func(s *tracepb.Span) *tracepb.Span { return byID[otlptest.ID(s.ParentSpanId)] }
	count := map[string]int{}
	for _, s := range spans {
		if string(s.TraceId) != string(root.TraceId) {
			continue
		}
		a := otlptest.Attrs(s.Attributes)
		if a["rewind.thread"] != "t-ok" || a["rewind.op"] != "run" {
			t.Errorf("span %q: thread %q op %q", s.Name, a["rewind.thread"], a["rewind.op"])
		}
		if runID == "" || a["rewind.run_id"] != runID {
			t.Errorf("span %q: run id %q, want the stored run's %q", s.Name, a["rewind.run_id"], runID)
		}
		kind, _, _ := strings.Cut(s.Name, " ")
		count[kind]++
		p := parentOf(s)
		want := map[string]string{"superstep": "rewind", "task": "superstep", "model": "task", "tool": "task"}[kind]
		if kind == "rewind" {
			continue
		}
		if p == nil || !strings.HasPrefix(p.Name, want) {
			t.Errorf("span %q: parent %v, want a %s span", s.Name, p.GetName(), want)
			continue
		}
		if a["rewind.checkpoint"] == "" {
			t.Errorf("span %q has no checkpoint", s.Name)
		}
		if (kind == "model" || kind == "tool") && a["rewind.task"] != otlptest.Attrs(p.Attributes)["rewind.task"] {
			t.Errorf("span %q of task %s under task %s", s.Name, a["rewind.task"], otlptest.Attrs(p.Attributes)["rewind.task"])
		}
	}
	calls := 0
	for _, n := range res.ModelCalls {
		calls += n
	}
	if count["superstep"] != len(res.Steps) || count["model"] != calls || count["tool"] == 0 || count["task"] < len(res.Steps) {
		t.Errorf("spans by kind %v; the turn had %d supersteps and %d model calls, and its executors called tools", count, len(res.Steps), calls)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// With no OTEL_* variable set nothing is built: no exporter, no provider,
// and a run's config is left as it was.
func TestNothingIsBuiltWithoutTheEnvironment(t *testing.T) {
	setEnv(t, nil)
	before := telemetry.ExportersBuilt()
	sig := telemetry.FromEnv(context.Background(), "test", func(s string) { t.Errorf("warned: %s", s) })
	if sig != nil {
		t.Fatal("FromEnv built a pipeline with no OTEL_* set")
	}
	cfg := engine.RunConfig{}
	r := sig.Start(context.Background(), nil, telemetry.RunInfo{Op: "run", Thread: "t"}, &cfg)
	if r != nil || cfg.Observe != nil {
		t.Fatal("a nil pipeline hooked the run")
	}
	r.End(context.Background(), engine.Result{}, nil)
	sig.Shutdown(context.Background())
	if telemetry.ExportersBuilt() != before {
		t.Fatal("an exporter was built with no OTEL_* set")
	}
}

func TestWantedReadsTheStandardVariables(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want telemetry.Signals
	}{
		{nil, telemetry.Signals{}},
		{map[string]string{"OTEL_SERVICE_NAME": "x"}, telemetry.Signals{}},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, telemetry.Signals{Traces: true, Metrics: true}},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, telemetry.Signals{Traces: true}},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:4318/v1/metrics"}, telemetry.Signals{Metrics: true}},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "none"}, telemetry.Signals{Traces: true}},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, telemetry.Signals{Traces: true}},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, telemetry.Signals{}},
	} {
		got := telemetry.Wanted(func(k string) string { return c.env[k] })
		if got != c.want {
			t.Errorf("%v: %+v, want %+v", c.env, got, c.want)
		}
	}
}

// A collector that does not answer, or is not there, costs the run
// nothing but one warning line: the export gives up after its timeout
// (this test would hang otherwise).
func TestABadEndpointWarnsOnceAndTheRunGoesOn(t *testing.T) {
	stuck := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-stuck }))
	defer hang.Close()
	defer close(stuck)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	refuses := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "collector overloaded", http.StatusInternalServerError)
	}))
	defer refuses.Close()
	col := otlptest.New(t)
	for name, env := range map[string]map[string]string{
		"nothing listens":          {"OTEL_EXPORTER_OTLP_ENDPOINT": closed},
		"nothing answers":          {"OTEL_EXPORTER_OTLP_ENDPOINT": hang.URL, "OTEL_EXPORTER_OTLP_TIMEOUT": "300"},
		"not a url at all:":        {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://[::1", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": closed},
		"the collector refuses":    {"OTEL_EXPORTER_OTLP_ENDPOINT": refuses.URL},
		"a value it cannot follow": {"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL(), "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
		"a CA file not there":      {"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL(), "OTEL_EXPORTER_OTLP_CERTIFICATE": "testdata/nothing.pem"},
	} {
		t.Run(name, func(t *testing.T) {
			setEnv(t, env)
			ctx := context.Background()
			var warned warnings
			sig := telemetry.FromEnv(ctx, "test", warned.add)
			e, err := ticket.NewEngine(memory.New(), ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			res, err := run(ctx, t, sig, e, "run", "t", engine.RunConfig{}, func(cfg engine.RunConfig) (engine.Result, error) {
				return e.Run(ctx, "t", ticket.Input(sentence), cfg)
			})
			sig.Shutdown(ctx)
			if err != nil || res.Status != engine.RunDone {
				t.Fatalf("the run: %v %+v", err, res)
			}
			if w := warned.all(); len(w) != 1 || !strings.Contains(w[0], "OpenTelemetry") {
				t.Fatalf("warnings %q, want one line", w)
			}
			want := map[string]string{
				"the collector refuses":    "500 Internal Server Error (body: collector overloaded)",
				"a value it cannot follow": "OTEL_EXPORTER_OTLP_COMPRESSION",
				"a CA file not there":      "OTEL_EXPORTER_OTLP_CERTIFICATE",
			}[name]
			if w := warned.all()[0]; !strings.Contains(w, want) {
				t.Errorf("warning %q does not say %q", w, want)
			}
			if name == "a value it cannot follow" && len(col.Spans()) == 0 {
				t.Errorf("a value ignored, yet nothing was exported")
			}
		})
	}
}

// The engine links no OpenTelemetry: this package listens to its hooks.
func TestTheEngineLinksNoOpenTelemetry(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "rewind/engine", "rewind/engine/ticket", "rewind/engine/worker").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "go.opentelemetry.io/") {
			t.Errorf("the engine links %s: OpenTelemetry belongs in rewind/engine/telemetry", pkg)
		}
	}
}
