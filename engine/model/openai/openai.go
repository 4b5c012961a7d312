// Package openai is a model.Model that speaks the OpenAI-compatible chat
// completions API: OpenAI itself, or a local server (llama.cpp, vLLM,
// Ollama, …) chosen by base URL alone. Each graph role can use its own
// model, e.g. a cheaper one for the summarizer.
//
// Calls retry rate limits, server errors, dropped connections and cut
// streams a bounded number of times with backoff (honouring Retry-After),
// and every failure comes back as one *Error line naming the role, the
// server's host, the model and what to do. The API key goes into the
// Authorization header and nowhere else: errors, descriptions and answers
// are scrubbed of it.
//
// When someone listens (Config.OnDelta, or stream.WithListener on the
// call's context) the answer is streamed and each piece is reported as it
// arrives; Complete still returns only the finished text.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"rewind/engine/model"
	"rewind/engine/model/stream"
)

// Provider is safe for concurrent use: the executors of a superstep call it
// in parallel.
type Provider struct {
	cfg  Config
	chat sdk.ChatCompletionService
	host string
	key  string // kept only to scrub it from server text

	// sleep waits between attempts; tests replace it to see the delays
	// without waiting them out.
	sleep func(ctx context.Context, d time.Duration) error

	// mode is the strongest JSON mode this server has not refused, so a
	// refusal costs one request per run, not one per call.
	mu   sync.Mutex
	mode string
}

var _ model.Model = (*Provider)(nil)

// New checks cfg and builds a provider. It reads no environment itself
// (see FromEnv), so a test's Config is all it uses.
func New(cfg Config) (*Provider, error) {
	u, err := cfg.validate()
	if err != nil {
		return nil, fmt.Errorf("openai provider: %w", err)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{} // the default transport: proxies from the environment
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			hc.Transport = t.Clone()
		}
	}
	// SDK retries are off: this package retries itself, so that it can
	// count attempts, cap Retry-After and reset a half-shown stream.
	opts := []option.RequestOption{option.WithHTTPClient(hc), option.WithBaseURL(cfg.BaseURL), option.WithMaxRetries(0)}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	p := &Provider{cfg: cfg, chat: sdk.NewChatCompletionService(opts...), host: u.Host, key: cfg.APIKey, sleep: model.Sleep, mode: cfg.JSONMode}
	if p.mode == "" {
		p.mode = model.JSONSchema
	}
	p.cfg.APIKey = ""
	return p, nil
}

// String describes the provider for a banner or a log, without the key.
func (p *Provider) String() string {
	key := "no key"
	if p.key != "" {
		key = "key set"
	}
	return fmt.Sprintf("openai-compatible %s (%s) %s", p.host, key, describeModels(p.cfg.Models))
}

// GoString keeps %#v as safe as %v.
func (p *Provider) GoString() string { return p.String() }

// Models returns the model name of each role.
func (p *Provider) Models() map[string]string {
	out := make(map[string]string, len(p.cfg.Models))
	for k, v := range p.cfg.Models {
		out[k] = v
	}
	return out
}

// ContextWindow implements model.Windowed: the configured window, else
// the one the server reported for the role's model, else
// model.DefaultWindow.
func (p *Provider) ContextWindow(role string) int {
	if p.cfg.ContextWindow > 0 {
		return p.cfg.ContextWindow
	}
	if w := p.cfg.Windows[p.cfg.Models[role]]; w > 0 {
		return w
	}
	return model.DefaultWindow
}

// JSONMode is the mode JSON requests are sent in now: the forced one, or
// the strongest the server has not refused so far.
func (p *Provider) JSONMode() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// Complete implements model.Model. A request for JSON goes out in the
// current JSON mode; when the server refuses that mode's response_format
// (a 400 naming it) and no mode was forced, the call is sent again in the
// next weaker mode, which the provider keeps for later calls.
func (p *Provider) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	mdl := p.cfg.Models[req.Role]
	if mdl == "" {
		return model.Response{}, fmt.Errorf("openai provider: no model for role %q: set %s or %s", req.Role, RoleEnv(req.Role), EnvModel)
	}
	if req.JSON == nil {
		return p.complete(ctx, req, mdl, "")
	}
	mode := p.JSONMode()
	for {
		resp, err := p.complete(ctx, req, mdl, mode)
		if err == nil {
			resp.JSONMode = mode
			return resp, nil
		}
		if !errors.Is(err, ErrFormatRefused) || p.cfg.JSONMode != "" {
			return resp, err
		}
		next, ok := p.weaken(mode)
		if !ok {
			return resp, err
		}
		mode = next
	}
}

// weaken is the mode after one the server refused, kept for later calls;
// ok is false when there is none.
func (p *Provider) weaken(refused string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.Index(model.JSONModes, refused)
	if i < 0 || i+1 >= len(model.JSONModes) {
		return "", false
	}
	next := model.JSONModes[i+1]
	if p.mode == refused { // a parallel call may have moved on already
		p.mode = next
	}
	return next, true
}

// complete makes one call in JSON mode (or "" for text), with retries.
func (p *Provider) complete(ctx context.Context, req model.Request, mdl, mode string) (model.Response, error) {
	listen := p.listener(ctx)
	var call uint64
	if listen != nil {
		call = stream.NewCall()
	}
	emit := func(d stream.Delta) {
		if listen != nil {
			d.Call, d.Role = call, req.Role
			listen(d)
		}
	}
	shown := false
	onText := func(s string) {
		shown = true
		emit(stream.Delta{Text: s})
	}
	for attempt := 1; ; attempt++ {
		if shown {
			emit(stream.Delta{Reset: true})
			shown = false
		}
		resp, f := p.attempt(ctx, req, mdl, mode, listen != nil || p.cfg.Stream, onText)
		if f == nil {
			emit(stream.Delta{Done: true})
			return resp, nil
		}
		if f.retry && attempt < p.cfg.MaxAttempts && ctx.Err() == nil {
			delay := p.backoff(attempt)
			if f.hasAfter {
				delay = f.retryAfter
			}
			if f.hasAfter && f.retryAfter > p.cfg.MaxRetryAfter {
				f.what += fmt.Sprintf(" and asks to wait %s, longer than the %s rewind waits", f.retryAfter.Round(time.Second), p.cfg.MaxRetryAfter)
			} else if err := p.sleep(ctx, delay); err != nil {
				f = &failure{kind: err, what: "was cancelled while waiting to retry (" + err.Error() + ")"}
			} else {
				continue
			}
		}
		err := p.fail(req.Role, mdl, attempt, f)
		emit(stream.Delta{Done: true, Err: err.Error()})
		return model.Response{}, err
	}
}

// listener combines the provider's and the context's listeners.
func (p *Provider) listener(ctx context.Context) stream.Func {
	a, b := p.cfg.OnDelta, stream.Listener(ctx)
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(d stream.Delta) { a(d); b(d) }
}

// backoff doubles from cfg.Backoff up to cfg.MaxBackoff, minus up to a
// fifth at random so parallel executors do not retry in lockstep.
func (p *Provider) backoff(attempt int) time.Duration {
	d := p.cfg.Backoff
	for i := 1; i < attempt && d < p.cfg.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.cfg.MaxBackoff)
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}

// attempt makes one request. onText sees streamed pieces as they arrive.
func (p *Provider) attempt(ctx context.Context, req model.Request, mdl, mode string, streaming bool, onText func(string)) (model.Response, *failure) {
	actx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	params := sdk.ChatCompletionNewParams{Model: mdl, Messages: wireMessages(req.Messages), Tools: wireTools(req.Tools)}
	switch {
	case req.JSON == nil:
	case mode == model.JSONSchema:
		params.ResponseFormat.OfJSONSchema = &sdk.ResponseFormatJSONSchemaParam{JSONSchema: sdk.ResponseFormatJSONSchemaJSONSchemaParam{
			Name: req.JSON.Name, Strict: sdk.Bool(true), Schema: req.JSON.Schema}}
	case mode == model.JSONObject:
		params.ResponseFormat.OfJSONObject = &sdk.ResponseFormatJSONObjectParam{}
	}

	if !streaming {
		resp, err := p.chat.New(actx, params)
		if err != nil {
			return model.Response{}, p.classify(ctx, actx, err, req.Role, mode)
		}
		if len(resp.Choices) == 0 {
			return model.Response{}, &failure{kind: ErrMalformed, what: "got an answer with no choices",
				hint: fmt.Sprintf("the server may not speak the OpenAI chat API; check %s", EnvBaseURL)}
		}
		ch := resp.Choices[0]
		u := resp.Usage
		var calls []model.ToolCall
		for _, c := range ch.Message.ToolCalls {
			if c.Type == "function" || c.Type == "" {
				calls = append(calls, model.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			}
		}
		return p.finish(req, ch.Message.Content, calls, ch.Message.Refusal, ch.FinishReason, u.JSON.PromptTokens.Valid(), int(u.PromptTokens), int(u.CompletionTokens))
	}

	params.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
	var raw *http.Response
	st := p.chat.NewStreaming(actx, params, option.WithResponseInto(&raw))
	defer st.Close()
	var text, refusal strings.Builder
	var calls streamedCalls
	finish := ""
	var sawUsage bool
	var pt, ct int
	for st.Next() {
		c := st.Current()
		if c.JSON.Usage.Valid() && c.Usage.JSON.PromptTokens.Valid() {
			sawUsage, pt, ct = true, int(c.Usage.PromptTokens), int(c.Usage.CompletionTokens)
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue
			}
			if s := ch.Delta.Content; s != "" {
				text.WriteString(s)
				onText(p.redact(s))
			}
			for _, c := range ch.Delta.ToolCalls {
				calls.add(c.Index, c.ID, c.Function.Name, c.Function.Arguments)
				// A tool call shows as it is written: its name, then its
				// arguments piece by piece.
				if c.Function.Name != "" {
					onText("calling " + c.Function.Name + " ")
				}
				if c.Function.Arguments != "" {
					onText(p.redact(c.Function.Arguments))
				}
			}
			refusal.WriteString(ch.Delta.Refusal)
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
	if err := st.Err(); err != nil {
		return model.Response{}, p.classify(ctx, actx, err, req.Role, mode)
	}
	if actx.Err() != nil {
		// A deadline can end the body read without a read error.
		return model.Response{}, p.classify(ctx, actx, actx.Err(), req.Role, mode)
	}
	if finish == "" {
		if raw != nil && text.Len() == 0 && !strings.Contains(raw.Header.Get("Content-Type"), "text/event-stream") {
			return model.Response{}, &failure{kind: ErrMalformed, what: fmt.Sprintf("answered a streamed request with %q instead of an event stream", raw.Header.Get("Content-Type")),
				hint: fmt.Sprintf("the server may not support streaming or not speak the OpenAI chat API; check %s", EnvBaseURL)}
		}
		return model.Response{}, &failure{kind: ErrTruncated, what: fmt.Sprintf("got a stream that ended before the answer was complete (no finish_reason after %d characters)", text.Len()),
			hint: "the connection or the server broke off; try again, or check the server's logs", retry: true}
	}
	return p.finish(req, text.String(), calls.list(), refusal.String(), finish, sawUsage, pt, ct)
}

// think is the reasoning block some local models put before the answer; it
// may hold braces that would confuse the planner's JSON extraction.
var think = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^\s*<think>.*?</think>`) })

// finish checks a complete answer and builds the response.
func (p *Provider) finish(req model.Request, text string, calls []model.ToolCall, refusal, reason string, haveUsage bool, pt, ct int) (model.Response, *failure) {
	switch reason {
	case "length":
		return model.Response{}, &failure{kind: ErrIncomplete, what: fmt.Sprintf("was cut off at the model's output limit (finish_reason length, %d characters)", len(text)),
			hint: "use a model with a larger output limit or context window; a cut answer breaks the planner's and critic's JSON"}
	case "content_filter":
		return model.Response{}, &failure{kind: ErrIncomplete, what: "was withheld by the server's content filter (finish_reason content_filter)",
			hint: "rephrase the ticket or use another model"}
	}
	text = strings.TrimSpace(think().ReplaceAllString(text, ""))
	if text == "" && len(calls) == 0 {
		if refusal != "" {
			return model.Response{}, &failure{kind: ErrIncomplete, what: "was refused by the model (" + p.clip(refusal) + ")", hint: "rephrase the ticket or use another model"}
		}
		return model.Response{}, &failure{kind: ErrMalformed, what: "got an empty answer",
			hint: fmt.Sprintf("check that %s names a chat model", RoleEnv(req.Role))}
	}
	if !haveUsage {
		// Some local servers report no usage; estimate like the mock does
		// (4 bytes a token) rather than report zero work.
		out := len(text)
		for _, c := range calls {
			out += len(c.Name) + len(c.Arguments)
		}
		pt, ct = req.TotalTokens(), (out+3)/4
	}
	for i := range calls {
		calls[i].Arguments = p.redact(calls[i].Arguments)
	}
	return model.Response{Text: p.redact(text), ToolCalls: calls, Usage: model.Usage{PromptTokens: pt, CompletionTokens: ct}}, nil
}

// wireMessages is the request's messages as the SDK sends them (the part
// each belongs to stays behind).
func wireMessages(ms []model.Message) []sdk.ChatCompletionMessageParamUnion {
	out := make([]sdk.ChatCompletionMessageParamUnion, 0, len(ms))
	for _, m := range ms {
		switch m.Role {
		case model.ChatSystem:
			out = append(out, sdk.SystemMessage(m.Content))
		case model.ChatAssistant:
			var a sdk.ChatCompletionAssistantMessageParam
			if m.Content != "" || len(m.ToolCalls) == 0 {
				a.Content.OfString = sdk.String(m.Content)
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID: c.ID, Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments}}})
			}
			out = append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case model.ChatTool:
			out = append(out, sdk.ToolMessage(m.Content, m.ToolCallID))
		default:
			out = append(out, sdk.UserMessage(m.Content))
		}
	}
	return out
}

// wireTools is the tools as function tools.
func wireTools(ts []model.Tool) []sdk.ChatCompletionToolUnionParam {
	var out []sdk.ChatCompletionToolUnionParam
	for _, t := range ts {
		var params shared.FunctionParameters
		_ = json.Unmarshal(t.Parameters, &params) // a tool's schema is rewind's own, valid JSON
		out = append(out, sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: t.Name, Description: sdk.String(t.Description), Parameters: params}))
	}
	return out
}

// streamedCalls puts tool calls back together from a stream's deltas:
// each delta carries a call's index and a piece of its arguments.
type streamedCalls struct {
	byIndex map[int64]*model.ToolCall
	order   []int64
}

func (s *streamedCalls) add(index int64, id, name, args string) {
	if s.byIndex == nil {
		s.byIndex = map[int64]*model.ToolCall{}
	}
	c, ok := s.byIndex[index]
	if !ok {
		c = &model.ToolCall{}
		s.byIndex[index] = c
		s.order = append(s.order, index)
	}
	if id != "" {
		c.ID = id
	}
	c.Name += name
	c.Arguments += args
}

func (s *streamedCalls) list() []model.ToolCall {
	var out []model.ToolCall
	for _, i := range s.order {
		out = append(out, *s.byIndex[i])
	}
	return out
}
