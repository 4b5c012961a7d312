package cli_test

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"rewind/engine/telemetry"
	"rewind/engine/telemetry/otlptest"
)

// A command that ran a turn exports its trace and counters before its
// process exits, to the collector OTEL_EXPORTER_OTLP_ENDPOINT names, and
// says nothing about it.
func TestARunExportsItsSignalsBeforeItExits(t *testing.T) {
	t.Parallel()
	col := otlptest.New(t)
	_, spec := dbSpec(t)
	env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.URL(), "OTEL_SERVICE_NAME=rewind-cli"}
	r := rewind(t, env, "run", "--thread", "t", "--input", "Where is my order SO20260901?", "--store", spec)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	root := 0
	for _, s := range col.Spans() {
		a := otlptest.Attrs(s.Attributes)
		if s.Name == "rewind run" && a["rewind.thread"] == "t" && a["rewind.status"] == "done" {
			root++
		}
	}
	if root != 1 || len(col.Spans()) < 10 {
		t.Fatalf("%d spans, %d of them the run's: the process exited before exporting", len(col.Spans()), root)
	}
	if got := col.Sum(telemetry.MetricRuns, map[string]string{"rewind.op": "run", "rewind.status": "done"}); got != 1 {
		t.Errorf("%s = %v, want 1", telemetry.MetricRuns, got)
	}
	if got := col.Resource()["service.name"]; got != "rewind-cli" {
		t.Errorf("service.name %q", got)
	}
}

// A collector that is not there costs the run one warning line on stderr.
func TestARunWithoutItsCollectorWarnsOnce(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	_, spec := dbSpec(t)
	r := rewind(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + closed}, "run", "--thread", "t", "--input", "Where is my order SO20260901?", "--store", spec)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if r.code != 0 || !strings.Contains(r.stdout, "done at checkpoint") || len(lines) != 1 || !strings.HasPrefix(lines[0], "rewind: warning: OpenTelemetry") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// `rewind stats` counts a thread's stored events: a run killed in the
// middle of its fan-out and finished by a resume, then a second turn
// whose resume found a record changed under it (a conflict).
func TestStatsOfAThreadWithAKillAndAConflict(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	do := func(code int, args ...string) result {
		t.Helper()
		r := rewind(t, nil, append(args, "--store", spec)...)
		if r.code != code {
			t.Fatalf("rewind %s: exit %d, want %d\n%s\n%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
		}
		return r
	}
	if r := do(-1, "run", "--thread", "t", "--input", "Where is my order SO20260901? Can I get a refund?", "--kill-at", "mid-fanout"); !strings.Contains(r.stdout, "kill point mid-fanout reached") {
		t.Fatalf("not killed:\n%s", r.stdout)
	}
	do(0, "resume", "t")
	do(0, "run", "--thread", "t", "--input", "And where is the parcel now?", "--interrupt-before", "critic")
	do(0, "source", "bump", "shipments/SO20260901")
	if r := do(0, "resume", "t"); !strings.Contains(r.stdout, "↻") {
		t.Fatalf("the resume found no changed record:\n%s", r.stdout)
	}
	var s struct {
		Thread string `json:"thread"`
		telemetry.Stats
	}
	out := do(0, "stats", "t", "--json").stdout
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("stats --json: %v\n%s", err, out)
	}
	calls := telemetry.Sum(s.Model.Calls)
	// Two turns of the mock: 8 model calls each, the second's summary call
	// and the executor the conflict ran again; the killed run's finished
	// executor is counted once, with the resume that took its writes.
	// Four runs: the killed turn, its resume, the interrupted turn, its
	// resume.
	if s.Thread != "t" || s.Runs.Turns != 2 || s.Runs.All != 4 || s.Conflicts != 1 || s.Runs.Failed != 0 || calls < 17 || s.Model.Calls["planner"] != 2 ||
		telemetry.Sum(s.Model.OutputTokens) == 0 || telemetry.Sum(s.Model.Errors) != 0 {
		t.Fatalf("stats --json: %s", out)
	}
	text := do(0, "stats", "t").stdout
	for _, want := range []string{"thread t, ", "rewind.runs                        2  turns started (2 inputs, 0 forks)", "4 runs in all with resumes and answers", "rewind.conflicts                   1  resumes",
		"rewind.model.calls", "planner 2", "not stored (live metrics only): rewind.fences"} {
		if !strings.Contains(text, want) {
			t.Errorf("stats text has no %q:\n%s", want, text)
		}
	}
	all := do(0, "stats", "--all", "--json").stdout
	var a telemetry.Stats
	if err := json.Unmarshal([]byte(all), &a); err != nil || a.Threads != 1 || telemetry.Sum(a.Model.Calls) != calls {
		t.Fatalf("stats --all --json (%v): %s", err, all)
	}
	if r := do(2, "stats", "t", "--all"); !strings.Contains(r.stderr, "a thread or --all") {
		t.Errorf("stats T --all: %s", r.stderr)
	}
}
