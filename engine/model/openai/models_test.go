package openai

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"

	"rewind/engine/model"
	"rewind/engine/model/openai/openaitest"
)

func TestDefaultModelOnOpenAI(t *testing.T) {
	cfg := Config{APIKey: key}
	note, err := ResolveModels(context.Background(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Roles {
		if cfg.Models[r] != DefaultModel {
			t.Errorf("%s: %q, want %s", r, cfg.Models[r], DefaultModel)
		}
	}
	if !strings.Contains(note, "no model named for any role: using "+DefaultModel) || !strings.Contains(note, EnvModel) {
		t.Errorf("note %q", note)
	}
	if _, err := New(cfg); err != nil {
		t.Errorf("the filled configuration: %v", err)
	}
	// A role named on its own keeps its model; the rest take the default.
	cfg = Config{BaseURL: DefaultBaseURL, APIKey: key, Models: map[string]string{model.RoleSummarizer: "gpt-5.4-nano"}}
	note, err = ResolveModels(context.Background(), &cfg)
	if err != nil || cfg.Models[model.RoleSummarizer] != "gpt-5.4-nano" || cfg.Models[model.RolePlanner] != DefaultModel || !strings.Contains(note, "for planner, executor, critic, reply:") {
		t.Errorf("partly named: %v %v, note %q", cfg.Models, err, note)
	}
}

func TestModelFromTheServersListing(t *testing.T) {
	ctx := context.Background()
	srv := openaitest.NewServer(openaitest.Echo)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	srv.SetModels([]string{"llama-3.2-3b-instruct"})
	cfg := Config{BaseURL: srv.BaseURL(), APIKey: key}
	note, err := ResolveModels(ctx, &cfg)
	if err != nil || cfg.Models[model.RoleReply] != "llama-3.2-3b-instruct" || len(cfg.Models) != len(Roles) {
		t.Fatalf("one model: %v %v", cfg.Models, err)
	}
	if want := `no model named for any role: using "llama-3.2-3b-instruct", the only model ` + host + " lists"; note != want {
		t.Errorf("note %q, want %q", note, want)
	}
	if r := srv.Requests(); len(r) != 1 || r[0].Path != "/v1/models" || r[0].Authorization != "Bearer "+key {
		t.Errorf("requests %+v", r)
	}

	// Every role named: the server is not asked.
	before := len(srv.Requests())
	if note, err := ResolveModels(ctx, &cfg); note != "" || err != nil || len(srv.Requests()) != before {
		t.Errorf("all named: %q %v after %d requests", note, err, len(srv.Requests())-before)
	}

	for name, c := range map[string]struct {
		models []string
		want   []string
	}{
		"several":    {[]string{"qwen2.5:0.5b", "llama3.1", "mistral"}, []string{"offers 3 models (\"qwen2.5:0.5b\", \"llama3.1\", \"mistral\")", "set OPENAI_MODEL to one of them"}},
		"many":       {[]string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, []string{"offers 10 models (", `"h" and 2 more)`}},
		"none":       {[]string{}, []string{host + " lists no models", "load one", EnvModel}},
		"no listing": {nil, []string{host + " has no models listing (GET …/models answered 404 Not Found)", EnvModel}},
	} {
		srv.SetModels(c.models)
		cfg := Config{BaseURL: srv.BaseURL()}
		_, err := ResolveModels(ctx, &cfg)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "no model named for any role, and ") {
			t.Errorf("%s: %v, want one line", name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", name, err, w)
			}
		}
	}

	srv.SetModels([]string{"x"})
	srv.Fail(openaitest.Fault{Status: 401, Message: "bad key " + key})
	if _, err := ResolveModels(ctx, &Config{BaseURL: srv.BaseURL(), APIKey: key}); err == nil || !strings.Contains(err.Error(), "refused to list its models (401 Unauthorized): check "+EnvAPIKey) || strings.Contains(err.Error(), key) {
		t.Errorf("401: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	_, err = ResolveModels(ctx, &Config{BaseURL: "http://" + dead + "/v1", APIKey: key})
	if err == nil || !strings.Contains(err.Error(), "asking "+dead+" which models it has failed") || !strings.Contains(err.Error(), EnvBaseURL) || strings.Contains(err.Error(), key) {
		t.Errorf("unreachable: %v", err)
	}
}

// README's "Real models" names the default model; they change together.
func TestREADMENamesTheDefaultModel(t *testing.T) {
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Unset: `"+DefaultModel+"`") {
		t.Fatalf("README.md does not name the default model %s", DefaultModel)
	}
}

// A server that reports its model's context window in the listing (vLLM's
// max_model_len) gives rewind that window; a configured one wins; none
// reported is the default.
func TestTheServersWindow(t *testing.T) {
	ctx := context.Background()
	srv := openaitest.NewServer(openaitest.Echo)
	defer srv.Close()
	srv.SetModels([]string{"qwen2.5-7b-instruct"})
	srv.SetModelWindows(map[string]int{"qwen2.5-7b-instruct": 32768})
	cfg := Config{BaseURL: srv.BaseURL(), APIKey: key}
	if _, err := ResolveModels(ctx, &cfg); err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w := p.ContextWindow(model.RoleCritic); w != 32768 {
		t.Fatalf("window %d, want the server's 32768", w)
	}
	cfg.ContextWindow = 8192
	if p, _ = New(cfg); p.ContextWindow(model.RoleCritic) != 8192 {
		t.Fatalf("window %d, want the configured 8192", p.ContextWindow(model.RoleCritic))
	}
	if p, _ = New(Config{BaseURL: srv.BaseURL(), APIKey: key, Models: cfg.Models}); p.ContextWindow(model.RoleCritic) != model.DefaultWindow {
		t.Fatalf("window %d, want the default", p.ContextWindow(model.RoleCritic))
	}
}
