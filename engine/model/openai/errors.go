package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"rewind/engine/model"
)

// Kinds of failure, matched with errors.Is on an *Error.
var (
	ErrAuth          = errors.New("API key refused")
	ErrModelNotFound = errors.New("model not found")
	ErrEndpoint      = errors.New("endpoint not found")
	ErrRateLimited   = errors.New("rate limited")
	ErrQuota         = errors.New("quota exhausted")
	ErrServer        = errors.New("server error")
	ErrRejected      = errors.New("request rejected")
	ErrUnreachable   = errors.New("server unreachable")
	ErrTimeout       = errors.New("no answer in time")
	ErrMalformed     = errors.New("malformed answer")
	ErrTruncated     = errors.New("truncated answer")
	ErrIncomplete    = errors.New("incomplete answer")
	// ErrFormatRefused is a 400 refusing the request's response_format:
	// the server cannot hold answers to that JSON mode.
	ErrFormatRefused = errors.New("response format refused")
)

// Error is a failed call: one line naming the role, the server's host, the
// model, what went wrong and what to do. It holds no request, header or key,
// so nothing reachable from it can leak the API key.
type Error struct {
	Role, Host, Model string
	// Status is the last HTTP status, 0 when there was none.
	Status int
	// Attempts made before giving up.
	Attempts int
	// What went wrong and what to do about it.
	What, Hint string
	// Mode is the JSON mode the server refused (ErrFormatRefused), Weaker
	// the one to force instead; the front end words how (the CLI, as its
	// flag). "" otherwise.
	Mode, Weaker string

	kind  error
	cause error // a context or network error, for errors.Is
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s call to %s (model %s) %s", e.Role, e.Host, e.Model, e.What)
	if e.Attempts > 1 {
		s += fmt.Sprintf(" after %d attempts", e.Attempts)
	}
	if e.Hint != "" {
		s += ": " + e.Hint
	}
	return s
}

// Unwrap exposes the kind (ErrAuth, …) and, for cancellations, timeouts and
// network failures, the underlying error.
func (e *Error) Unwrap() []error {
	out := []error{e.kind}
	if e.cause != nil {
		out = append(out, e.cause)
	}
	return out
}

// failure is one attempt's outcome before it becomes an *Error.
type failure struct {
	kind       error
	status     int
	what, hint string
	retry      bool
	// mode refused and the weaker one to force (ErrFormatRefused)
	mode, weaker string
	retryAfter   time.Duration // 0 when the server said nothing
	hasAfter     bool
	cause        error
}

// classify turns what the SDK returned into a failure. actx is the attempt's
// context (with the per-attempt timeout), ctx the caller's.
func (p *Provider) classify(ctx, actx context.Context, err error, role, mode string) *failure {
	if ctx.Err() != nil {
		return &failure{kind: ctx.Err(), what: "was cancelled (" + ctx.Err().Error() + ")"}
	}
	if actx.Err() != nil {
		return &failure{kind: ErrTimeout, what: fmt.Sprintf("got no complete answer within %s", p.cfg.Timeout),
			hint: fmt.Sprintf("the server is slow or stuck; raise %s (e.g. 10m) for slow local models, or check the server", EnvTimeout), cause: context.DeadlineExceeded}
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return p.classifyStatus(apiErr, role, mode)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return &failure{kind: ErrServer, what: "was broken off by an error event in the stream (" + p.clip(se.Message) + ")",
			hint: "the server failed mid-answer; try again, or check the server's logs", retry: true}
	}
	// A body that stops mid-JSON is the server's answer being malformed;
	// the SDK says so with this prefix (a test pins it).
	if strings.HasPrefix(err.Error(), "error parsing response json") {
		return &failure{kind: ErrMalformed, what: "got an answer that is not a chat completion (" + p.clip(err.Error()) + ")",
			hint: fmt.Sprintf("the server may not speak the OpenAI chat API at this address; check %s (most servers want …/v1)", EnvBaseURL)}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return &failure{kind: ErrTruncated, what: "lost the connection mid-answer (" + p.clip(err.Error()) + ")",
			hint: "the server or a proxy cut the response; try again, or check the server's logs", retry: true}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return &failure{kind: ErrUnreachable, what: "could not reach the server (" + p.clip(ue.Err.Error()) + ")",
			hint: fmt.Sprintf("is the server running? check %s", EnvBaseURL), retry: true, cause: ue.Err}
	}
	return &failure{kind: ErrMalformed, what: "got an answer that is not a chat completion (" + p.clip(err.Error()) + ")",
		hint: fmt.Sprintf("the server may not speak the OpenAI chat API at this address; check %s (most servers want …/v1)", EnvBaseURL)}
}

func (p *Provider) classifyStatus(e *sdk.Error, role, mode string) *failure {
	f := &failure{status: e.StatusCode}
	msg := strings.TrimSpace(e.Message)
	detail := http.StatusText(e.StatusCode)
	if msg != "" {
		detail += ": " + p.clip(msg)
	}
	code := strings.ToLower(e.Code + " " + e.Type)
	roleVar := RoleEnv(role)
	switch s := e.StatusCode; {
	case s == http.StatusUnauthorized:
		f.kind, f.what = ErrAuth, fmt.Sprintf("was refused (%d %s)", s, detail)
		f.hint = fmt.Sprintf("the API key is missing or wrong; check %s", EnvAPIKey)
	case s == http.StatusForbidden:
		f.kind, f.what = ErrAuth, fmt.Sprintf("was refused (%d %s)", s, detail)
		f.hint = fmt.Sprintf("the key may not have access to this model or project; check %s and the key's permissions", EnvAPIKey)
	case s == http.StatusNotFound:
		if strings.Contains(code, "model") || strings.Contains(strings.ToLower(msg), "model") {
			f.kind, f.what = ErrModelNotFound, fmt.Sprintf("names a model the server does not have (%d %s)", s, detail)
			f.hint = fmt.Sprintf("set %s or %s to a model the server lists (GET …/models)", roleVar, EnvModel)
		} else {
			f.kind, f.what = ErrEndpoint, fmt.Sprintf("found no chat completions endpoint (%d %s)", s, detail)
			f.hint = fmt.Sprintf("check %s (most servers want …/v1), or the model name in %s / %s", EnvBaseURL, roleVar, EnvModel)
		}
	case s == http.StatusTooManyRequests && (strings.Contains(code, "quota") || strings.Contains(strings.ToLower(msg), "quota")):
		f.kind, f.what = ErrQuota, fmt.Sprintf("was refused for quota (%d %s)", s, detail)
		f.hint = "the account's quota or credit is used up; check the plan and billing, or use another key"
	case s == http.StatusTooManyRequests:
		f.kind, f.what, f.retry = ErrRateLimited, fmt.Sprintf("was rate limited (%d %s)", s, detail), true
		f.hint = "wait a minute before carrying on, or lower the load"
	case s == http.StatusBadRequest && (strings.Contains(code, "context_length") || strings.Contains(strings.ToLower(msg), "maximum context length")):
		f.kind, f.cause, f.what = ErrRejected, model.ErrContextLength, fmt.Sprintf("was longer than the model's context window (%d %s)", s, detail)
		f.hint = fmt.Sprintf("set %s to the model's window so rewind compacts before it, or name a model with a larger window in %s", EnvContextWindow, roleVar)
	case s == http.StatusBadRequest && strings.Contains(strings.ToLower(msg), "tool"):
		f.kind, f.cause, f.what = ErrRejected, model.ErrRequestInvalid, fmt.Sprintf("was refused for its tool messages (%d %s)", s, detail)
		f.hint = "a tool call and its result were sent apart; this is a bug in how the request was built: report it with the request, which is stored with the checkpoint"
	case (s == http.StatusBadRequest || s == http.StatusUnprocessableEntity) && mode != "" && namesFormat(e):
		f.kind, f.what = ErrFormatRefused, fmt.Sprintf("was refused in JSON mode %s (%d %s)", mode, s, detail)
		f.hint, f.mode, f.weaker = "the server does not accept this response_format", mode, weaker(mode)
	case s == http.StatusRequestTimeout || s == http.StatusConflict || s >= 500:
		f.kind, f.what, f.retry = ErrServer, fmt.Sprintf("failed on the server (%d %s)", s, detail), true
		f.hint = "the server is failing; try again later, or check its status page or logs"
	default:
		f.kind, f.what = ErrRejected, fmt.Sprintf("was rejected (%d %s)", s, detail)
		f.hint = fmt.Sprintf("the server refused the request as sent; check that %s names a chat model", roleVar)
	}
	if e.Response != nil {
		f.retryAfter, f.hasAfter = retryAfter(e.Response.Header, time.Now())
	}
	return f
}

// namesFormat says whether a refusal is about the response_format: the
// error's param, message or, for servers that answer in their own shape
// (FastAPI's {"detail": …}), the body.
func namesFormat(e *sdk.Error) bool {
	text := e.Param + " " + e.Code + " " + e.Message + " " + e.RawJSON()
	if e.Response != nil && e.Response.Body != nil {
		b, _ := io.ReadAll(io.LimitReader(e.Response.Body, 8<<10))
		text += " " + string(b)
	}
	text = strings.ToLower(text)
	for _, k := range []string{"response_format", "json_schema", "json_object", "response format"} {
		if strings.Contains(text, k) {
			return true
		}
	}
	return false
}

// weaker is the mode to suggest after mode was refused.
func weaker(mode string) string {
	if mode == model.JSONSchema {
		return model.JSONObject
	}
	return model.JSONPrompt
}

// retryAfter reads retry-after-ms (OpenAI's) or Retry-After (seconds or an
// HTTP date).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && s < 1e9 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// clip makes server text fit on one line, without the key.
func (p *Provider) clip(s string) string {
	s = strings.Join(strings.Fields(p.redact(s)), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	return s
}

// minKeyLen is the shortest key redacted from text: shorter "keys" (local
// servers' placeholders like "none") would mangle ordinary words.
const minKeyLen = 8

// redact removes the API key from text a server sent back (a proxy may echo
// the Authorization header into an error or even an answer).
func (p *Provider) redact(s string) string {
	if len(p.key) >= minKeyLen {
		s = strings.ReplaceAll(s, p.key, "[redacted]")
	}
	return s
}

func (p *Provider) fail(role, mdl string, attempts int, f *failure) *Error {
	return &Error{Role: role, Host: p.host, Model: mdl, Status: f.status, Attempts: attempts,
		What: p.redact(f.what), Hint: p.redact(f.hint), Mode: f.mode, Weaker: f.weaker, kind: f.kind, cause: f.cause}
}
