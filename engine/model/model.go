// Package model is how graph nodes talk to a language model: one small
// interface, plus a deterministic, offline, call-counting mock for tests,
// demos and drills.
package model

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"rewind/engine/model/stream"
)

// Roles of the ticket graph's calls; a provider may map each to a model.
const (
	RolePlanner    = "planner"
	RoleExecutor   = "executor"
	RoleCritic     = "critic"
	RoleSummarizer = "summarizer"
	RoleReply      = "reply"
)

// Request is one chat call: the role that makes it (a provider may map
// each role to a model), the chat messages, the tools the model may call.
type Request struct {
	Role     string    `json:"role"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
	// JSON, when set, asks for an answer that is one JSON object of this
	// schema. A provider that can constrain the answer does; any other
	// answers as it would anyway, so callers still parse tolerantly
	// (Candidates).
	JSON *Schema `json:"json,omitempty"`
	// KeepAnswer asks the engine to store the answer's text with the
	// call: the caller keeps it nowhere else (a plan, a verdict), and a
	// person looking at what the model saw wants what it said, too.
	KeepAnswer bool `json:"-"`
}

// Schema names a JSON Schema for structured output. Write it in the subset
// strict structured outputs accept: every property required, no
// additionalProperties.
type Schema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
}

// How a JSON answer was asked for, weakest last: a provider tries them in
// this order and records the one the server accepted.
const (
	JSONSchema = "schema" // response_format json_schema, strict
	JSONObject = "object" // response_format json_object
	JSONPrompt = "prompt" // the system prompt alone
)

// JSONModes lists the modes in the order they are tried.
var JSONModes = []string{JSONSchema, JSONObject, JSONPrompt}

// Usage counts tokens of one call.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
}

// Add counts another call's tokens in.
func (u *Usage) Add(o Usage) {
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
}

// Response is a finished answer: text, tool calls, or both.
type Response struct {
	Text      string     `json:"text"`
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	Usage     Usage      `json:"usage"`
	// JSONMode is how a Request.JSON answer was asked for (JSONSchema,
	// JSONObject or JSONPrompt); empty for a text request, or a model
	// with no such modes (the mock).
	JSONMode string `json:"jsonMode,omitempty"`
}

// Model answers requests. Implementations must honour ctx cancellation.
type Model interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// Windowed is a model that knows each role's context window, in tokens.
type Windowed interface {
	ContextWindow(role string) int
}

// DefaultWindow is the context window assumed for a model that says
// none: small enough that rewind's requests are held to what most local
// models take.
const DefaultWindow = 16384

// WindowOf is m's context window for role, or DefaultWindow.
func WindowOf(m Model, role string) int {
	if w, ok := m.(Windowed); ok {
		if n := w.ContextWindow(role); n > 0 {
			return n
		}
	}
	return DefaultWindow
}

// RequestError is a request the server refused as malformed (a 400): a
// dangling tool call, a context past the window. Retrying the same
// request cannot help.
type RequestError struct {
	Status        int
	Code, Message string
}

// Unwrap tells the kind: ErrContextLength or ErrRequestInvalid.
func (e *RequestError) Unwrap() error {
	if e.Code == "context_length_exceeded" {
		return ErrContextLength
	}
	return ErrRequestInvalid
}

// Kinds of a refused request, matched with errors.Is.
var (
	ErrRequestInvalid = errors.New("request refused as invalid")
	ErrContextLength  = errors.New("request longer than the context window")
)

func (e *RequestError) Error() string {
	return fmt.Sprintf("the server refused the request (%d %s): %s", e.Status, e.Code, e.Message)
}

// ErrInjected is the failure a Mock returns when told to fail.
var ErrInjected = errors.New("injected model failure")

// Responder produces a mock's answer from a request.
type Responder func(req Request) (Response, error)

// Text is a Responder that answers with text alone.
func Text(f func(req Request) (string, error)) Responder {
	return func(req Request) (Response, error) {
		s, err := f(req)
		return Response{Text: s}, err
	}
}

// Mock is a deterministic offline model. It counts calls per role, can wait
// a latency per call (so a person can kill a run by hand) and can be told
// to fail the calls of given roles.
type Mock struct {
	Respond Responder
	Latency time.Duration
	// Jitter adds up to this much to each call's latency, chosen from the
	// request and Seed: parallel calls finish apart (a kill during a
	// fan-out catches some done and some not), and the same run, or a
	// resume redoing a call, waits the same again.
	Jitter time.Duration
	Seed   uint64
	// Window, when set, is the context window in tokens: a longer request
	// is refused with a 400 context_length_exceeded, as a server does.
	Window int

	mu    sync.Mutex
	calls map[string]int
	fail  map[string]int // role → failures left (-1 = always)
}

// NewMock builds a mock around a responder.
func NewMock(r Responder) *Mock { return &Mock{Respond: r} }

// FailRole makes the next n calls of role fail (n < 0: every call).
func (m *Mock) FailRole(role string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail == nil {
		m.fail = map[string]int{}
	}
	m.fail[role] = n
}

// Complete implements Model.
func (m *Mock) Complete(ctx context.Context, req Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	// With a listener the latency is spent streaming the answer instead.
	if wait := m.Wait(req); wait > 0 && stream.Listener(ctx) == nil {
		if err := Sleep(ctx, wait); err != nil {
			return Response{}, err
		}
	}
	m.mu.Lock()
	if m.calls == nil {
		m.calls = map[string]int{}
	}
	m.calls[req.Role]++
	left, failing := m.fail[req.Role]
	if failing && left != 0 {
		if left > 0 {
			m.fail[req.Role] = left - 1
		}
		m.mu.Unlock()
		return Response{}, fmt.Errorf("mock %s call: %w", req.Role, ErrInjected)
	}
	m.mu.Unlock()
	if m.Respond == nil {
		return Response{}, fmt.Errorf("mock model has no responder for role %q", req.Role)
	}
	// The mock holds requests to the rules a real server does.
	if err := CheckSequence(req.Messages); err != nil {
		return Response{}, &RequestError{Status: 400, Code: "invalid_request_error", Message: err.Error()}
	}
	if w := m.Window; w > 0 {
		if n := req.TotalTokens(); n > w {
			return Response{}, &RequestError{Status: 400, Code: "context_length_exceeded",
				Message: fmt.Sprintf("this model's maximum context length is %d tokens; the messages resulted in %d tokens", w, n)}
		}
	}
	resp, err := m.Respond(req)
	if err != nil {
		return Response{}, fmt.Errorf("mock %s call: %w", req.Role, err)
	}
	if l := stream.Listener(ctx); l != nil {
		shown := resp.Text
		if shown == "" && len(resp.ToolCalls) > 0 {
			shown = describeCalls(resp.ToolCalls)
		}
		if err := m.stream(ctx, l, req.Role, shown, m.Wait(req)); err != nil {
			return Response{}, err
		}
	}
	out := resp.Text
	for _, c := range resp.ToolCalls {
		out += c.Name + c.Arguments
	}
	resp.Usage = Usage{PromptTokens: req.TotalTokens(), CompletionTokens: approxTokens(out)}
	return resp, nil
}

// ContextWindow implements Windowed: the mock's Window, or
// DefaultWindow.
func (m *Mock) ContextWindow(string) int {
	if m.Window > 0 {
		return m.Window
	}
	return DefaultWindow
}

// describeCalls is tool calls as a person reads them: "order_status({…})".
func describeCalls(cs []ToolCall) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Name + "(" + c.Arguments + ")"
	}
	return "calling " + strings.Join(parts, ", ")
}

// Wait is how long the mock takes to answer req: Latency plus its share of
// Jitter, a function of Seed, the role and the prompt alone.
func (m *Mock) Wait(req Request) time.Duration {
	if m.Jitter <= 0 {
		return m.Latency
	}
	h := fnv.New64a()
	var seed [8]byte
	binary.LittleEndian.PutUint64(seed[:], m.Seed)
	h.Write(seed[:])
	h.Write([]byte(req.Role))
	h.Write([]byte{0})
	h.Write([]byte(req.Prompt()))
	return m.Latency + time.Duration(h.Sum64()%uint64(m.Jitter))
}

// Calls returns the calls made so far, by role.
func (m *Mock) Calls() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int, len(m.calls))
	for k, v := range m.calls {
		out[k] = v
	}
	return out
}

// Total is the number of calls made so far.
func (m *Mock) Total() int {
	n := 0
	for _, v := range m.Calls() {
		n += v
	}
	return n
}

// approxTokens is the usual 4-bytes-a-token estimate, for usage figures only.
func approxTokens(s string) int { return (len(s) + 3) / 4 }

// Counts is calls by role; Sum adds them up.
type Counts map[string]int

// Sum is the total number of calls.
func (c Counts) Sum() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// Add merges other into c.
func (c Counts) Add(other map[string]int) {
	for k, v := range other {
		c[k] += v
	}
}

// String prints "critic=2 executor=4" with roles sorted.
func (c Counts) String() string {
	keys := slices.Sorted(maps.Keys(c))
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s=%d", k, c[k])
	}
	if s == "" {
		return "none"
	}
	return s
}

// stream shows the answer word by word over the mock's latency, so a
// display sees tokens arrive as it would from a real model.
func (m *Mock) stream(ctx context.Context, l stream.Func, role, text string, wait time.Duration) error {
	call := stream.NewCall()
	words := strings.SplitAfter(text, " ")
	pause := time.Duration(0)
	if wait > 0 && len(words) > 0 {
		pause = wait / time.Duration(len(words))
	}
	if pause == 0 {
		words = []string{text}
	}
	for _, w := range words {
		if pause > 0 {
			if err := Sleep(ctx, pause); err != nil {
				l(stream.Delta{Call: call, Role: role, Done: true, Err: err.Error()})
				return err
			}
		}
		l(stream.Delta{Call: call, Role: role, Text: w})
	}
	l(stream.Delta{Call: call, Role: role, Done: true})
	return nil
}

// Sleep waits d, or until ctx ends (then it returns ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
