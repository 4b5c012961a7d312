// Package openaitest is a fake OpenAI-compatible chat completions server for
// tests and demo recordings. It answers with a Brain (TicketBrain answers
// the ticket graph's prompts the way a chat model would), streams over SSE
// when asked, and can be told to fail the next requests the ways real
// servers do: error statuses, stalls, malformed bodies, cut streams.
//
// It never touches the network beyond its own loopback listener.
package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"unicode/utf8"

	"rewind/engine/model"
)

// Brain answers one chat request: text, tool calls, or both. req is what
// came over the wire (no parts: a server never sees them).
type Brain func(model string, req model.Request) (model.Response, error)

// Echo is a brain that repeats the last user message, for tests of the
// transport.
func Echo(_ string, req model.Request) (model.Response, error) {
	return model.Response{Text: "echo: " + req.Prompt()}, nil
}

// Request is what the server received, for assertions.
type Request struct {
	Path          string
	Model         string
	System        string
	Prompt        string
	Stream        bool
	IncludeUsage  bool
	Authorization string
	// Messages and Tools are the request's chat messages and tools, as
	// received; System and Prompt above are its system and user texts.
	Messages []model.Message
	Tools    []model.Tool
	// ResponseFormat is the response_format type asked for: "" (none),
	// "text", "json_object" or "json_schema"; SchemaName, Schema and
	// Strict are its json_schema.
	ResponseFormat string
	SchemaName     string
	Schema         json.RawMessage
	Strict         bool
}

// Formats says which response_format types a server accepts.
type Formats int

const (
	// FormatsAll accepts json_schema and json_object (OpenAI, vLLM,
	// llama.cpp, Ollama): the answer is the JSON alone, as a constrained
	// decoder makes it.
	FormatsAll Formats = iota
	// FormatsObject accepts json_object only: json_schema is refused with
	// a 400 naming response_format.
	FormatsObject
	// FormatsNone refuses any JSON response_format with a 400.
	FormatsNone
	// FormatsIgnored accepts any response_format and answers as the brain
	// does, prose and all (some servers drop fields they do not know).
	FormatsIgnored
)

// Fault makes one request fail. The zero Fault answers normally.
type Fault struct {
	// Status answers with this HTTP status and an OpenAI-style error body.
	Status        int
	Code, Message string
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// Body answers 200 with this raw body and ContentType (default
	// application/json): malformed JSON, an HTML page, …; with Status, it
	// is the error body instead of OpenAI's shape.
	Body, ContentType string
	// Stall holds the request until the client gives up or the server closes.
	Stall bool
	// CutAfter, on a streamed request, sends this many content chunks and
	// then ends the stream without a finish_reason; Abort drops the
	// connection instead of ending the body cleanly.
	CutAfter int
	Abort    bool
	// StreamError, on a streamed request, sends an error event after the
	// first chunk.
	StreamError string
	// FinishReason replaces "stop" (e.g. "length").
	FinishReason string
}

// Server is an httptest.Server speaking POST /v1/chat/completions.
type Server struct {
	*httptest.Server
	brain Brain
	// ChunkRunes is how many characters each streamed chunk carries.
	ChunkRunes int
	// NoUsage leaves usage out of answers (some local servers do).
	NoUsage bool
	// Window is the context window in tokens (about four bytes a token):
	// a longer request is refused with 400 context_length_exceeded, as
	// real servers do. 0 takes model.DefaultWindow; a negative one none.
	Window int

	mu       sync.Mutex
	formats  Formats
	models   []string
	windows  map[string]int
	faults   []Fault
	faultFor func(Request) *Fault
	requests []Request
	quit     chan struct{}
	closed   sync.Once
}

// NewServer starts a server answering with brain. Close it when done.
func NewServer(brain Brain) *Server {
	s := &Server{brain: brain, ChunkRunes: 8, quit: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// BaseURL is the API root to configure a client with.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Close releases stalled requests, then stops the server.
func (s *Server) Close() {
	s.closed.Do(func() { close(s.quit) })
	s.Server.Close()
}

// SetFormats says which response_format types the server accepts
// (FormatsAll until told otherwise).
func (s *Server) SetFormats(f Formats) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.formats = f
}

// SetModels is what GET /v1/models lists; nil (the start) answers it with
// 404, as servers without the listing do.
func (s *Server) SetModels(ids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = ids
}

// SetModelWindows makes GET /v1/models report each model's context window
// as vLLM does (max_model_len).
func (s *Server) SetModelWindows(w map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.windows = w
}

// Fail queues faults for the next requests, one each.
func (s *Server) Fail(f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f...)
}

// FailWhen decides per request (after queued faults are used up); nil
// answers normally.
func (s *Server) FailWhen(f func(Request) *Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faultFor = f
}

// Requests returns what the server received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type wireRequest struct {
	Model         string        `json:"model"`
	Messages      []wireMessage `json:"messages"`
	Tools         []wireTool    `json:"tools"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

// text reads a message's content: a string, or an array of text parts.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	models, formats := s.models, s.formats
	s.mu.Unlock()
	if r.Method == http.MethodGet && r.URL.Path == "/v1/models" && models != nil {
		s.listModels(w, r, models)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		s.mu.Lock()
		s.requests = append(s.requests, Request{Path: r.URL.Path, Authorization: r.Header.Get("Authorization")})
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "unknown_url", fmt.Sprintf("Unknown request URL: %s %s", r.Method, r.URL.Path), "")
		return
	}
	var wr wireRequest
	if err := json.NewDecoder(r.Body).Decode(&wr); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_json", "could not parse the JSON body: "+err.Error(), "")
		return
	}
	req := requestOf(r, wr)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	f := s.nextFault(req)
	s.mu.Unlock()
	if s.answerFault(w, r, f) {
		return
	}
	if refused := refuses(formats, req.ResponseFormat); refused != "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", refused, "response_format")
		return
	}
	// The rules every OpenAI-compatible server holds messages to.
	if err := model.CheckSequence(req.Messages); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "Invalid parameter: "+err.Error(), "messages")
		return
	}
	if window, n := s.window(), promptTokens(req); window > 0 && n > window {
		writeError(w, http.StatusBadRequest, "context_length_exceeded",
			fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", window, n), "messages")
		return
	}
	mr := model.Request{Messages: req.Messages, Tools: req.Tools}
	resp, err := s.brain(req.Model, mr)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "brain_failed", err.Error(), "")
		return
	}
	answer, calls := resp.Text, resp.ToolCalls
	if formats != FormatsIgnored && (req.ResponseFormat == "json_object" || req.ResponseFormat == "json_schema") {
		answer = constrained(answer)
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	if f.FinishReason != "" {
		finish = f.FinishReason
	}
	out := answer
	for _, c := range calls {
		out += c.Name + c.Arguments
	}
	usage := map[string]int{"prompt_tokens": promptTokens(req), "completion_tokens": tokens(out)}
	usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
	if !req.Stream {
		body := map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion", "created": 1767225600, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": wireAnswer(answer, calls), "finish_reason": finish}},
		}
		if !s.NoUsage {
			body["usage"] = usage
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
		return
	}
	s.stream(w, req, f, answer, calls, finish, usage)
}

// requestOf is what the server records of a chat request: its messages in
// rewind's terms, the system text, the last user prompt and the tools.
func requestOf(r *http.Request, wr wireRequest) Request {
	req := Request{Path: r.URL.Path, Model: wr.Model, Stream: wr.Stream, Authorization: r.Header.Get("Authorization")}
	req.IncludeUsage = wr.StreamOptions != nil && wr.StreamOptions.IncludeUsage
	if rf := wr.ResponseFormat; rf != nil {
		req.ResponseFormat = rf.Type
		if js := rf.JSONSchema; js != nil {
			req.SchemaName, req.Schema, req.Strict = js.Name, js.Schema, js.Strict
		}
	}
	for _, m := range wr.Messages {
		cm := model.Message{Role: m.Role, Content: text(m.Content), ToolCallID: m.ToolCallID}
		switch m.Role {
		case "system", "developer":
			cm.Role = model.ChatSystem
			if req.System != "" {
				req.System += "\n"
			}
			req.System += cm.Content
		case "user":
			req.Prompt = cm.Content // the last user message: the task
		}
		for _, c := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, model.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		req.Messages = append(req.Messages, cm)
	}
	for _, t := range wr.Tools {
		req.Tools = append(req.Tools, model.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return req
}

// nextFault is the fault queued for this request, or the one faultFor
// picks, or none. The caller holds s.mu.
func (s *Server) nextFault(req Request) *Fault {
	var f *Fault
	if len(s.faults) > 0 {
		f = &s.faults[0]
		s.faults = s.faults[1:]
	} else if s.faultFor != nil {
		f = s.faultFor(req)
	}
	if f == nil {
		f = &Fault{}
	}
	return f
}

// answerFault answers with the fault's stall, status or body, and says
// whether it did; a fault with none of them lets the request through.
func (s *Server) answerFault(w http.ResponseWriter, r *http.Request, f *Fault) bool {
	switch {
	case f.Stall:
		select {
		case <-r.Context().Done():
		case <-s.quit:
		}
		return true
	case f.Status != 0:
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		if f.Body != "" { // an error in the server's own shape
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(f.Status)
			_, _ = w.Write([]byte(f.Body))
			return true
		}
		writeError(w, f.Status, f.Code, f.Message, "")
		return true
	case f.Body != "":
		ct := f.ContentType
		if ct == "" {
			ct = "application/json"
		}
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write([]byte(f.Body))
		return true
	}
	return false
}

// wireAnswer is an answer's message as OpenAI writes it: content null when
// there are tool calls and no text.
func wireAnswer(text string, calls []model.ToolCall) map[string]any {
	m := map[string]any{"role": "assistant", "content": text}
	if len(calls) > 0 {
		if text == "" {
			m["content"] = nil
		}
		m["tool_calls"] = wireCalls(calls, false)
	}
	return m
}

// wireCalls is tool calls as a message (or, indexed, a stream's delta)
// carries them.
func wireCalls(calls []model.ToolCall, indexed bool) []any {
	out := make([]any, len(calls))
	for i, c := range calls {
		w := map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
		if indexed {
			w["index"] = i
		}
		out[i] = w
	}
	return out
}

func (s *Server) window() int {
	switch {
	case s.Window < 0:
		return 0
	case s.Window == 0:
		return model.DefaultWindow
	}
	return s.Window
}

// promptTokens counts a request as the server does: every message's text
// and tool calls, and the tools offered.
func promptTokens(req Request) int {
	n := 0
	for _, m := range req.Messages {
		n += tokens(m.Content) + 1
		for _, c := range m.ToolCalls {
			n += tokens(c.ID + c.Name + c.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += tokens(t.Name + t.Description + string(t.Parameters))
	}
	return n
}

// refuses says why a server accepting formats rejects a response_format
// type, or "".
func refuses(formats Formats, typ string) string {
	switch {
	case typ != "json_schema" && typ != "json_object":
		return ""
	case formats == FormatsNone, formats == FormatsObject && typ == "json_schema":
		// vLLM's and llama.cpp's wording differs; each names the field.
		return fmt.Sprintf("response_format type %q is not supported by this server", typ)
	}
	return ""
}

// constrained is what a decoder held to JSON makes of an answer: the JSON
// object in it, without the prose around it. An answer with none stays as
// it is.
func constrained(answer string) string {
	for _, c := range model.Candidates(answer) {
		var v map[string]any
		if json.Unmarshal([]byte(c), &v) == nil {
			return c
		}
	}
	return answer
}

// listModels answers GET /v1/models as OpenAI does; a queued fault's
// status answers it instead.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request, models []string) {
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Authorization: r.Header.Get("Authorization")})
	var f *Fault
	if len(s.faults) > 0 {
		f = &s.faults[0]
		s.faults = s.faults[1:]
	}
	s.mu.Unlock()
	if f != nil && f.Status != 0 {
		writeError(w, f.Status, f.Code, f.Message, "")
		return
	}
	s.mu.Lock()
	windows := s.windows
	s.mu.Unlock()
	data := make([]any, len(models))
	for i, m := range models {
		entry := map[string]any{"id": m, "object": "model", "created": 1767225600, "owned_by": "openaitest"}
		if w := windows[m]; w > 0 {
			entry["max_model_len"] = w
		}
		data[i] = entry
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

func (s *Server) stream(w http.ResponseWriter, req Request, f *Fault, answer string, calls []model.ToolCall, finish string, usage map[string]int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1767225600, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	n := s.ChunkRunes
	if n <= 0 {
		n = 8
	}
	sent := 0
	for rest := answer; rest != ""; sent++ {
		if f.CutAfter > 0 && sent == f.CutAfter {
			if f.Abort {
				panic(http.ErrAbortHandler) // drops the connection mid-body
			}
			return // a clean end of body, but no finish_reason and no [DONE]
		}
		if f.StreamError != "" && sent == 1 {
			send(map[string]any{"error": map[string]any{"message": f.StreamError, "type": "server_error"}})
			return
		}
		piece := rest
		if utf8.RuneCountInString(piece) > n {
			piece = string([]rune(piece)[:n])
		}
		rest = rest[len(piece):]
		send(chunk(map[string]any{"content": piece}, nil))
	}
	// Tool calls come whole, one chunk each: the client joins chunks by
	// index, so this is what a server sending one call per chunk does.
	for _, c := range wireCalls(calls, true) {
		send(chunk(map[string]any{"tool_calls": []any{c}}, nil))
	}
	send(chunk(map[string]any{}, finish))
	if req.IncludeUsage && !s.NoUsage {
		send(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1767225600, "model": req.Model, "choices": []any{}, "usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func writeError(w http.ResponseWriter, status int, code, msg, param string) {
	if msg == "" {
		msg = http.StatusText(status)
	}
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": code, "param": param}})
}

// tokens is a plausible token count: about four bytes a token.
func tokens(s string) int { return (len(s) + 3) / 4 }
