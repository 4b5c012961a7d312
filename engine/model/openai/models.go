package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultModel is what every role uses on OpenAI's own API when no model
// is named: a small, current chat model (fast, cheap, structured outputs).
// README's "Real models" names it; change both together.
const DefaultModel = "gpt-5.4-mini"

// listTimeout bounds the GET …/models a custom server is asked.
const listTimeout = 30 * time.Second

// ResolveModels gives every role without a model one: DefaultModel on
// OpenAI's API; on any other server the one model its GET …/models lists
// (llama.cpp, an Ollama with one model). A server offering several, none,
// or no listing is an error naming what it offers and what to set. The
// note says what was chosen, for the user to see; it is "" when every
// role was named.
func ResolveModels(ctx context.Context, cfg *Config) (note string, err error) {
	var missing []string
	for _, r := range Roles {
		if strings.TrimSpace(cfg.Models[r]) == "" {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return "", nil
	}
	if cfg.Models == nil {
		cfg.Models = map[string]string{}
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil // New names the bad URL
	}
	roles := strings.Join(missing, ", ")
	if len(missing) == len(Roles) {
		roles = "any role"
	}
	fill := func(m string) {
		for _, r := range missing {
			cfg.Models[r] = m
		}
	}
	if isOpenAI(u) {
		fill(DefaultModel)
		return fmt.Sprintf("no model named for %s: using %s, rewind's default on %s (set %s, or %s for one role, to choose)", roles, DefaultModel, u.Host, EnvModel, RoleEnv(missing[0])), nil
	}
	ids, windows, err := listModels(ctx, cfg, u)
	if err != nil {
		return "", fmt.Errorf("no model named for %s, and %w", roles, err)
	}
	if len(windows) > 0 && cfg.Windows == nil {
		cfg.Windows = windows
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("no model named for %s, and %s lists no models: load one into the server, or set %s", roles, u.Host, EnvModel)
	case 1:
		fill(ids[0])
		return fmt.Sprintf("no model named for %s: using %q, the only model %s lists", roles, ids[0], u.Host), nil
	}
	shown := ids
	more := ""
	if len(shown) > 8 {
		shown, more = shown[:8], fmt.Sprintf(" and %d more", len(ids)-8)
	}
	quoted := make([]string, len(shown))
	for i, id := range shown {
		quoted[i] = fmt.Sprintf("%q", id)
	}
	return "", fmt.Errorf("no model named for %s, and %s offers %d models (%s%s): set %s to one of them, or %s for one role", roles, u.Host, len(ids), strings.Join(quoted, ", "), more, EnvModel, RoleEnv(missing[0]))
}

// listModels asks GET base/models which models the server has. Its errors
// read on from "no model named for …, and ".
func listModels(ctx context.Context, cfg *Config, base *url.URL) ([]string, map[string]int, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(cfg.BaseURL, "/")+"/models", nil)
	if err != nil {
		return nil, nil, fmt.Errorf("the models listing of %s cannot be asked for (%v): set %s", base.Host, err, EnvModel)
	}
	if key := strings.TrimSpace(cfg.APIKey); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		// The url.Error names the URL, never the header: no key in it.
		reason := err.Error()
		var ue *url.Error
		if errors.As(err, &ue) {
			reason = ue.Err.Error()
		}
		return nil, nil, fmt.Errorf("asking %s which models it has failed (%s): is the server running? check %s, or set %s", base.Host, oneLine(reason), EnvBaseURL, EnvModel)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, nil, fmt.Errorf("%s refused to list its models (%s): check %s, or set %s", base.Host, resp.Status, EnvAPIKey, EnvModel)
	case resp.StatusCode != http.StatusOK:
		return nil, nil, fmt.Errorf("%s has no models listing (GET …/models answered %s): set %s to the model to use", base.Host, resp.Status, EnvModel)
	}
	// Servers that know a model's context window say so in the listing:
	// vLLM as max_model_len, others as context_length or context_window.
	var list struct {
		Data []struct {
			ID            string `json:"id"`
			MaxModelLen   int    `json:"max_model_len"`
			ContextLength int    `json:"context_length"`
			ContextWindow int    `json:"context_window"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&list); err != nil {
		return nil, nil, fmt.Errorf("%s answered GET …/models with something that is not a models list (%s): check %s (most servers want …/v1), or set %s", base.Host, oneLine(err.Error()), EnvBaseURL, EnvModel)
	}
	var ids []string
	windows := map[string]int{}
	for _, m := range list.Data {
		if id := strings.TrimSpace(m.ID); id != "" {
			ids = append(ids, id)
			if w := max(m.MaxModelLen, m.ContextLength, m.ContextWindow); w >= 1024 {
				windows[id] = w
			}
		}
	}
	return ids, windows, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
