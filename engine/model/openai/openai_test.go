package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"rewind/engine/model"
	"rewind/engine/model/openai/openaitest"
	"rewind/engine/model/stream"
)

const key = "sk-test-SENTINEL-0123456789abcdef"

func allModels(m string) map[string]string {
	out := map[string]string{}
	for _, r := range Roles {
		out[r] = m
	}
	return out
}

// harness is a provider against a fake server, with waits recorded instead
// of waited out.
type harness struct {
	srv    *openaitest.Server
	p      *Provider
	mu     sync.Mutex
	delays []time.Duration
}

func newHarness(t *testing.T, brain openaitest.Brain, mod func(*Config)) *harness {
	t.Helper()
	h := &harness{srv: openaitest.NewServer(brain)}
	t.Cleanup(h.srv.Close)
	cfg := Config{BaseURL: h.srv.BaseURL(), APIKey: key, Models: allModels("fake-large")}
	cfg.Models[model.RoleSummarizer] = "fake-small"
	if mod != nil {
		mod(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.sleep = func(ctx context.Context, d time.Duration) error {
		h.mu.Lock()
		h.delays = append(h.delays, d)
		h.mu.Unlock()
		return ctx.Err()
	}
	h.p = p
	return h
}

func (h *harness) waits() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.delays...)
}

var req = model.Simple(model.RolePlanner, "You are the planner.", "REQUEST: where is my parcel?")

func TestCompleteSendsRoleModelAndKey(t *testing.T) {
	h := newHarness(t, openaitest.Echo, nil)
	resp, err := h.p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "echo: "+req.Prompt() {
		t.Errorf("text %q", resp.Text)
	}
	if resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 {
		t.Errorf("usage %+v: the server reported usage", resp.Usage)
	}
	if _, err := h.p.Complete(context.Background(), model.Simple(model.RoleSummarizer, "", "#1 user: hi")); err != nil {
		t.Fatal(err)
	}
	got := h.srv.Requests()
	if len(got) != 2 || got[0].Model != "fake-large" || got[1].Model != "fake-small" {
		t.Fatalf("requests %+v: want the planner on fake-large and the summarizer on fake-small", got)
	}
	if got[0].System != req.System() || got[0].Prompt != req.Prompt() || got[0].Stream {
		t.Errorf("request %+v", got[0])
	}
	if got[0].Authorization != "Bearer "+key {
		t.Errorf("authorization %q", got[0].Authorization)
	}
	if got[1].System != "" {
		t.Errorf("empty system prompt sent as %q", got[1].System)
	}
}

func TestLocalServerNeedsNoKey(t *testing.T) {
	h := newHarness(t, openaitest.Echo, func(c *Config) { c.APIKey = "" })
	if _, err := h.p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if a := h.srv.Requests()[0].Authorization; a != "" {
		t.Errorf("sent Authorization %q without a key", a)
	}
	if _, err := New(Config{Models: allModels("gpt-x")}); err == nil || !strings.Contains(err.Error(), EnvAPIKey) {
		t.Errorf("api.openai.com without a key: %v", err)
	}
}

func TestStreamingReportsDeltasAndReturnsWholeText(t *testing.T) {
	for _, viaConfig := range []bool{false, true} {
		t.Run(fmt.Sprintf("config=%t", viaConfig), func(t *testing.T) {
			var mu sync.Mutex
			var got []stream.Delta
			listen := func(d stream.Delta) { mu.Lock(); got = append(got, d); mu.Unlock() }
			ctx := context.Background()
			h := newHarness(t, openaitest.Echo, func(c *Config) {
				if viaConfig {
					c.OnDelta = listen
				}
			})
			if !viaConfig {
				ctx = stream.WithListener(ctx, listen)
			}
			resp, err := h.p.Complete(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			r := h.srv.Requests()[0]
			if !r.Stream || !r.IncludeUsage {
				t.Errorf("request %+v: want stream with usage", r)
			}
			var joined strings.Builder
			pieces := 0
			for _, d := range got[:len(got)-1] {
				if d.Role != model.RolePlanner || d.Call != got[0].Call || d.Done || d.Reset {
					t.Fatalf("delta %+v", d)
				}
				joined.WriteString(d.Text)
				pieces++
			}
			if last := got[len(got)-1]; !last.Done || last.Err != "" {
				t.Errorf("last delta %+v, want Done", last)
			}
			if pieces < 2 || joined.String() != resp.Text || resp.Text != "echo: "+req.Prompt() {
				t.Errorf("%d pieces %q, final %q", pieces, joined.String(), resp.Text)
			}
			if resp.Usage.CompletionTokens != (len(resp.Text)+3)/4 {
				t.Errorf("usage %+v: want the server's figures from the last chunk", resp.Usage)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{
		"OPENAI_BASE_URL":         "http://localhost:11434/v1",
		"OPENAI_MODEL":            "llama3.1",
		"REWIND_MODEL_SUMMARIZER": "qwen2.5:0.5b",
		"REWIND_MODEL_TIMEOUT":    "10m",
		"REWIND_MODEL_RETRIES":    "0",
	}
	cfg, err := FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Models[model.RolePlanner] != "llama3.1" || cfg.Models[model.RoleSummarizer] != "qwen2.5:0.5b" || cfg.Timeout != 10*time.Minute || cfg.MaxAttempts != 1 {
		t.Errorf("config %+v", cfg)
	}
	if _, err := New(cfg); err != nil {
		t.Errorf("a local server with a model and no key: %v", err)
	}
	delete(env, "OPENAI_MODEL")
	cfg, _ = FromEnv(func(k string) string { return env[k] })
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "OPENAI_MODEL") || !strings.Contains(err.Error(), "planner") {
		t.Errorf("missing models: %v", err)
	}
	for k, v := range map[string]string{"REWIND_MODEL_TIMEOUT": "soon", "REWIND_MODEL_RETRIES": "-1"} {
		bad := map[string]string{k: v}
		if _, err := FromEnv(func(k string) string { return bad[k] }); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
	for _, base := range []string{"localhost:8080", "ftp://x/v1", "http://"} {
		if _, err := New(Config{BaseURL: base, Models: allModels("m")}); err == nil || !strings.Contains(err.Error(), EnvBaseURL) {
			t.Errorf("base %q: %v", base, err)
		}
	}
}

func TestSecretsStayOutOfDescriptions(t *testing.T) {
	cfg := Config{BaseURL: "http://user:hunter2hunter2@localhost:1/v1", APIKey: key, Models: allModels("m")}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg), fmt.Sprintf("%v %+v %#v %s", p, p, p, p)} {
		if strings.Contains(s, key) || strings.Contains(s, "hunter2") {
			t.Fatalf("secret printed: %s", s)
		}
	}
	if !strings.Contains(p.String(), "localhost:1") || !strings.Contains(p.String(), "key set") {
		t.Errorf("description %q", p.String())
	}
}

// failureCase is one way a server fails, what the caller must see, and
// how many requests the provider may make (bounded retry).
type failureCase struct {
	name     string
	faults   []openaitest.Fault
	always   *openaitest.Fault
	brain    openaitest.Brain
	stream   bool
	base     string // path to use instead of /v1
	kind     error
	requests int
	want     []string
	waits    []time.Duration // exact waits asked, when the server said
}

func TestFailuresGiveOneClearLine(t *testing.T) {
	echoKey := "Incorrect API key provided: " + key + ". You can find your API key at https://platform.openai.com."
	cases := []failureCase{
		{name: "401", faults: []openaitest.Fault{{Status: 401, Code: "invalid_api_key", Message: echoKey}}, kind: ErrAuth, requests: 1,
			want: []string{"planner call to 127.0.0.1", "(model fake-large)", "401", "OPENAI_API_KEY", "[redacted]"}},
		{name: "403", faults: []openaitest.Fault{{Status: 403, Message: "project has no access"}}, kind: ErrAuth, requests: 1, want: []string{"403", "permissions"}},
		{name: "404 model", faults: []openaitest.Fault{{Status: 404, Code: "model_not_found", Message: "The model `fake-large` does not exist"}}, kind: ErrModelNotFound, requests: 1,
			want: []string{"does not have", "REWIND_MODEL_PLANNER", "OPENAI_MODEL"}},
		{name: "404 path", base: "/api", kind: ErrEndpoint, requests: 1, want: []string{"no chat completions endpoint", "OPENAI_BASE_URL", "/v1"}},
		{name: "400", faults: []openaitest.Fault{{Status: 400, Code: "invalid_value", Message: "bad request"}}, kind: ErrRejected, requests: 1, want: []string{"rejected (400"}},
		{name: "429 always", always: &openaitest.Fault{Status: 429, Message: "Rate limit reached", RetryAfter: "2"}, kind: ErrRateLimited, requests: 4,
			want: []string{"rate limited (429", "after 4 attempts", "wait a minute"}, waits: []time.Duration{2 * time.Second, 2 * time.Second, 2 * time.Second}},
		{name: "429 long retry-after", always: &openaitest.Fault{Status: 429, RetryAfter: "3600"}, kind: ErrRateLimited, requests: 1, want: []string{"asks to wait 1h0m0s"}},
		{name: "429 quota", faults: []openaitest.Fault{{Status: 429, Code: "insufficient_quota", Message: "You exceeded your current quota"}}, kind: ErrQuota, requests: 1, want: []string{"billing"}},
		{name: "503 always", always: &openaitest.Fault{Status: 503, Message: "overloaded"}, kind: ErrServer, requests: 4, want: []string{"503", "after 4 attempts", "try again later"}},
		{name: "malformed JSON", faults: []openaitest.Fault{{Body: `{"id":"x","choices":[{"message":{"content":"hi`}}, kind: ErrMalformed, requests: 1, want: []string{"not a chat completion", "OPENAI_BASE_URL"}},
		{name: "invalid JSON", faults: []openaitest.Fault{{Body: `{"id": nope}`}}, kind: ErrMalformed, requests: 1, want: []string{"not a chat completion"}},
		{name: "HTML page", faults: []openaitest.Fault{{Body: "<html>login</html>", ContentType: "text/html"}}, kind: ErrMalformed, requests: 1, want: []string{"not a chat completion"}},
		{name: "no choices", faults: []openaitest.Fault{{Body: `{"id":"x","object":"chat.completion","choices":[]}`}}, kind: ErrMalformed, requests: 1, want: []string{"no choices"}},
		{name: "empty answer", brain: func(string, model.Request) (model.Response, error) { return model.Response{Text: "  "}, nil }, kind: ErrMalformed, requests: 1, want: []string{"empty answer"}},
		{name: "length", faults: []openaitest.Fault{{FinishReason: "length"}}, kind: ErrIncomplete, requests: 1, want: []string{"output limit"}},
		{name: "stream length", stream: true, faults: []openaitest.Fault{{FinishReason: "length"}}, kind: ErrIncomplete, requests: 1, want: []string{"output limit"}},
		{name: "stream cut cleanly", stream: true, always: &openaitest.Fault{CutAfter: 2}, kind: ErrTruncated, requests: 4, want: []string{"ended before the answer was complete", "after 4 attempts"}},
		{name: "stream connection dropped", stream: true, always: &openaitest.Fault{CutAfter: 2, Abort: true}, kind: ErrTruncated, requests: 4, want: []string{"after 4 attempts"}},
		{name: "stream error event", stream: true, always: &openaitest.Fault{StreamError: "model crashed"}, kind: ErrServer, requests: 4, want: []string{"model crashed"}},
		{name: "stream malformed chunk", stream: true, faults: []openaitest.Fault{{Body: "data: {not json\n\n", ContentType: "text/event-stream"}}, kind: ErrMalformed, requests: 1, want: []string{"not a chat completion"}},
		{name: "stream answered as JSON", stream: true, faults: []openaitest.Fault{{Body: `{"choices":[]}`}}, kind: ErrMalformed, requests: 1, want: []string{"instead of an event stream"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			brain := c.brain
			if brain == nil {
				brain = openaitest.Echo
			}
			h := newHarness(t, brain, func(cfg *Config) {
				cfg.Stream = c.stream
				if c.base != "" {
					cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/v1") + c.base
				}
			})
			h.srv.Fail(c.faults...)
			if c.always != nil {
				f := *c.always
				h.srv.FailWhen(func(openaitest.Request) *openaitest.Fault { return &f })
			}
			_, err := h.p.Complete(context.Background(), req)
			checkFailure(t, err, c.kind, c.want)
			if n := len(h.srv.Requests()); n != c.requests {
				t.Errorf("%d requests, want %d", n, c.requests)
			}
			if c.waits != nil && fmt.Sprint(h.waits()) != fmt.Sprint(c.waits) {
				t.Errorf("waited %v, want %v (Retry-After)", h.waits(), c.waits)
			}
		})
	}
}

func checkFailure(t *testing.T, err error, kind error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, kind) {
		t.Fatalf("error %T %v, want *Error of kind %v", err, err, kind)
	}
	msg := err.Error()
	t.Log(msg)
	if strings.Contains(msg, "\n") || strings.Contains(msg, key) {
		t.Fatalf("not one safe line: %q", msg)
	}
	for _, w := range append([]string{"planner", "fake-large"}, want...) {
		if !strings.Contains(msg, w) {
			t.Errorf("%q lacks %q", msg, w)
		}
	}
}

func TestRetriesRecoverAndResetTheStream(t *testing.T) {
	var mu sync.Mutex
	var ds []stream.Delta
	ctx := stream.WithListener(context.Background(), func(d stream.Delta) { mu.Lock(); ds = append(ds, d); mu.Unlock() })
	h := newHarness(t, openaitest.Echo, nil)
	h.srv.Fail(openaitest.Fault{CutAfter: 2, Abort: true}, openaitest.Fault{Status: 500}, openaitest.Fault{Status: 429, RetryAfter: "1"})
	resp, err := h.p.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "echo: "+req.Prompt() || len(h.srv.Requests()) != 4 {
		t.Fatalf("text %q after %d requests", resp.Text, len(h.srv.Requests()))
	}
	w := h.waits()
	if len(w) != 3 || w[2] != time.Second || w[0] <= 0 || w[0] > DefaultBackoff || w[1] <= w[0]/2 || w[1] > 2*DefaultBackoff {
		t.Errorf("waits %v: want backoff, doubled, then the server's Retry-After", w)
	}
	// What a display shows: the cut attempt's text, a reset, the full text.
	shown := ""
	resets := 0
	for _, d := range ds {
		if d.Reset {
			shown, resets = "", resets+1
		}
		shown += d.Text
	}
	if resets != 1 || shown != resp.Text || !ds[len(ds)-1].Done {
		t.Errorf("display shows %q after %d resets: %+v", shown, resets, ds)
	}
}

func TestUnreachableServer(t *testing.T) {
	h := newHarness(t, openaitest.Echo, nil)
	h.srv.Close()
	_, err := h.p.Complete(context.Background(), req)
	checkFailure(t, err, ErrUnreachable, []string{"could not reach", "after 4 attempts", "OPENAI_BASE_URL"})
}

func TestSlowServerTimesOut(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%t", streaming), func(t *testing.T) {
			h := newHarness(t, openaitest.Echo, func(c *Config) { c.Timeout = 50 * time.Millisecond; c.Stream = streaming })
			h.srv.FailWhen(func(openaitest.Request) *openaitest.Fault { return &openaitest.Fault{Stall: true} })
			_, err := h.p.Complete(context.Background(), req)
			checkFailure(t, err, ErrTimeout, []string{"no complete answer within 50ms", "REWIND_MODEL_TIMEOUT"})
			if !errors.Is(err, context.DeadlineExceeded) || len(h.srv.Requests()) != 1 {
				t.Errorf("%v after %d requests", err, len(h.srv.Requests()))
			}
		})
	}
}

func TestCallerDeadlineAndCancel(t *testing.T) {
	h := newHarness(t, openaitest.Echo, nil)
	h.srv.FailWhen(func(openaitest.Request) *openaitest.Fault { return &openaitest.Fault{Stall: true} })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := h.p.Complete(ctx, req)
	checkFailure(t, err, context.DeadlineExceeded, []string{"was cancelled"})

	// Cancel once the server holds the request.
	arrived := make(chan struct{}, 1)
	h.srv.FailWhen(func(openaitest.Request) *openaitest.Fault {
		arrived <- struct{}{}
		return &openaitest.Fault{Stall: true}
	})
	ctx, cancel = context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	_, err = h.p.Complete(ctx, req)
	checkFailure(t, err, context.Canceled, []string{"was cancelled"})

	// Cancel while waiting to retry: no further request.
	h.srv.FailWhen(func(openaitest.Request) *openaitest.Fault { return &openaitest.Fault{Status: 503} })
	ctx, cancel = context.WithCancel(context.Background())
	h.p.sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	before := len(h.srv.Requests())
	_, err = h.p.Complete(ctx, req)
	checkFailure(t, err, context.Canceled, []string{"waiting to retry"})
	if n := len(h.srv.Requests()) - before; n != 1 {
		t.Errorf("%d requests after a cancel during backoff", n)
	}
}

func TestAnswerCleanup(t *testing.T) {
	brain := func(string, model.Request) (model.Response, error) {
		return model.Response{Text: "<think>maybe {\"x\": 1}</think>\n{\"subtasks\":[]} (key " + key + ")"}, nil
	}
	h := newHarness(t, brain, func(c *Config) { c.Stream = true })
	h.srv.NoUsage = true
	resp, err := h.p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"subtasks":[]} (key [redacted])` {
		t.Errorf("text %q: want the think block dropped and the key scrubbed", resp.Text)
	}
	if resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 {
		t.Errorf("usage %+v: want an estimate when the server reports none", resp.Usage)
	}
}

func TestRetryAfterForms(t *testing.T) {
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second, true},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"7"}}, 250 * time.Millisecond, true},
		{http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}, 30 * time.Second, true},
		{http.Header{"Retry-After": {"soon"}}, 0, false},
		{http.Header{}, 0, false},
	} {
		d, ok := retryAfter(c.h, now)
		if d != c.want || ok != c.ok {
			t.Errorf("%v: %v %t, want %v %t", c.h, d, ok, c.want, c.ok)
		}
	}
}
