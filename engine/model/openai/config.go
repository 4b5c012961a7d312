package openai

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"rewind/engine/model"
	"rewind/engine/model/stream"
)

// Roles are the graph's model roles, each of which needs a model name.
var Roles = []string{model.RolePlanner, model.RoleExecutor, model.RoleCritic, model.RoleSummarizer, model.RoleReply}

// DefaultBaseURL is OpenAI's API; any server speaking the same chat
// completions API (llama.cpp, vLLM, Ollama, …) works by changing it.
const DefaultBaseURL = "https://api.openai.com/v1"

// Defaults for the zero values of Config.
const (
	DefaultTimeout       = 3 * time.Minute
	DefaultMaxAttempts   = 4
	DefaultBackoff       = 500 * time.Millisecond
	DefaultMaxBackoff    = 20 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
)

// Config says where the provider sends calls and how hard it tries.
// Zero durations and counts take the defaults above.
type Config struct {
	// BaseURL is the API root, e.g. http://localhost:11434/v1.
	BaseURL string
	// APIKey is sent as a bearer token. It may be empty for servers other
	// than api.openai.com. It is never marshalled or printed.
	APIKey string `json:"-"`
	// Models maps each role to a model name; every role needs one.
	Models map[string]string
	// Timeout bounds one attempt, streaming included.
	Timeout time.Duration
	// MaxAttempts bounds tries per call (1 = no retry).
	MaxAttempts int
	// Backoff is the first retry's wait, doubled per attempt up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After rewind waits out; a server
	// asking for more fails the call at once with that figure.
	MaxRetryAfter time.Duration
	// Stream asks for streamed answers even when nobody listens.
	Stream bool
	// OnDelta sees every call's text as it arrives (see package stream); a
	// listener on the call's context sees it too.
	OnDelta stream.Func
	// HTTPClient replaces the default client (tests, proxies).
	HTTPClient *http.Client
	// JSONMode forces how JSON answers are asked for (model.JSONSchema,
	// JSONObject or JSONPrompt). Empty tries them in that order and keeps
	// the first the server accepts.
	JSONMode string
	// ContextWindow is the models' context window in tokens (0: the
	// server's, else model.DefaultWindow): rewind compacts the
	// conversation before a request would pass it.
	ContextWindow int
	// Windows are the context windows the server reported, by model
	// (ResolveModels fills it from GET …/models when it asks).
	Windows map[string]int
}

// Environment variables read by FromEnv.
const (
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvModel   = "OPENAI_MODEL"
	// EnvRoleModelPrefix + upper-case role, e.g. REWIND_MODEL_SUMMARIZER,
	// overrides OPENAI_MODEL for one role.
	EnvRoleModelPrefix = "REWIND_MODEL_"
	EnvTimeout         = "REWIND_MODEL_TIMEOUT"
	EnvRetries         = "REWIND_MODEL_RETRIES"
	EnvContextWindow   = "REWIND_CONTEXT_WINDOW"
)

// RoleEnv is the variable naming role's model, e.g. REWIND_MODEL_PLANNER.
func RoleEnv(role string) string { return EnvRoleModelPrefix + strings.ToUpper(role) }

// FromEnv reads the configuration from getenv (os.Getenv in the CLI).
func FromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		BaseURL: strings.TrimSpace(getenv(EnvBaseURL)),
		APIKey:  strings.TrimSpace(getenv(EnvAPIKey)),
		Models:  map[string]string{},
	}
	def := strings.TrimSpace(getenv(EnvModel))
	for _, role := range Roles {
		m := strings.TrimSpace(getenv(RoleEnv(role)))
		if m == "" {
			m = def
		}
		if m != "" {
			cfg.Models[role] = m
		}
	}
	if v := strings.TrimSpace(getenv(EnvTimeout)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("%s=%q is not a positive duration: write e.g. 90s or 5m", EnvTimeout, v)
		}
		cfg.Timeout = d
	}
	if v := strings.TrimSpace(getenv(EnvRetries)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 10 {
			return Config{}, fmt.Errorf("%s=%q is not a retry count from 0 to 10", EnvRetries, v)
		}
		cfg.MaxAttempts = n + 1
	}
	if v := strings.TrimSpace(getenv(EnvContextWindow)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1024 || n > 10_000_000 {
			return Config{}, fmt.Errorf("%s=%q is not a context window from 1024 to 10000000 tokens: write the model's window, e.g. 32768", EnvContextWindow, v)
		}
		cfg.ContextWindow = n
	}
	return cfg, nil
}

// WindowFromEnv is the context window REWIND_CONTEXT_WINDOW names, or
// model.DefaultWindow when it names none (or nothing valid: FromEnv says
// why, where a model is built).
func WindowFromEnv(getenv func(string) string) int {
	if n, err := strconv.Atoi(strings.TrimSpace(getenv(EnvContextWindow))); err == nil && n >= 1024 && n <= 10_000_000 {
		return n
	}
	return model.DefaultWindow
}

// String describes the configuration without the key, so a Config printed
// by accident (%v, %+v, %#v) cannot leak it.
func (c Config) String() string {
	key := "no key"
	if c.APIKey != "" {
		key = "key set"
	}
	return fmt.Sprintf("openai-compatible %s (%s) %s", hostOf(c.BaseURL), key, describeModels(c.Models))
}

// GoString keeps %#v as safe as %v.
func (c Config) GoString() string { return c.String() }

func describeModels(models map[string]string) string {
	parts := make([]string, 0, len(Roles))
	for _, r := range Roles {
		if m := models[r]; m != "" {
			parts = append(parts, r+"="+m)
		}
	}
	return strings.Join(parts, " ")
}

// hostOf is the part of a base URL safe to print: host and port only, never
// user info or query.
func hostOf(base string) string {
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "an unparsable base URL"
	}
	return u.Host
}

// isOpenAI says whether the base URL is OpenAI's own API, which needs a key.
func isOpenAI(u *url.URL) bool {
	h := strings.ToLower(u.Hostname())
	return h == "api.openai.com" || strings.HasSuffix(h, ".openai.com")
}

// validate fills defaults and checks everything New needs, naming the
// variable to fix.
func (c *Config) validate() (*url.URL, error) {
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := "that value"
		if err == nil {
			shown = fmt.Sprintf("%q", u.Redacted())
		}
		return nil, fmt.Errorf("%s is %s, not an http(s) URL: set it to the API root, e.g. http://localhost:11434/v1 or %s", EnvBaseURL, shown, DefaultBaseURL)
	}
	if strings.ContainsAny(c.APIKey, " \t\r\n") {
		return nil, fmt.Errorf("%s contains white space or a line break: set it to the key alone", EnvAPIKey)
	}
	if c.APIKey == "" && isOpenAI(u) {
		return nil, fmt.Errorf("%s is not set and %s needs one: export it, or point %s at a local server (llama.cpp, vLLM, Ollama), which needs none", EnvAPIKey, u.Host, EnvBaseURL)
	}
	if c.JSONMode != "" && !slices.Contains(model.JSONModes, c.JSONMode) {
		return nil, fmt.Errorf("JSON mode %q is not one of %s: choose one, or leave it out to let rewind pick", c.JSONMode, strings.Join(model.JSONModes, ", "))
	}
	var missing []string
	for _, r := range Roles {
		if strings.TrimSpace(c.Models[r]) == "" {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no model named for %s: set %s for every role, or %s for one role", strings.Join(missing, ", "), EnvModel, RoleEnv(missing[0]))
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Backoff <= 0 {
		c.Backoff = DefaultBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.MaxRetryAfter <= 0 {
		c.MaxRetryAfter = DefaultMaxRetryAfter
	}
	return u, nil
}
