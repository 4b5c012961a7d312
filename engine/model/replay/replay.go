// Package replay records a run's model exchanges to a file and serves them
// back offline, so a class can replay a real model's session with no
// network and no key, and get the same checkpoints every time.
//
// A Recorder wraps any model.Model and appends each finished exchange
// (role, chat messages, tool names, answer and tool calls or error, usage, JSON mode; never a
// key or a server address) to the file as it happens, so a killed run still leaves a
// valid recording and a resumed run adds to it. A Replayer answers each call
// from the recording, matched by role and request and, among identical
// requests, in recorded order; it refuses, naming the call and how its
// prompt differs, when the run asks something the recording does not hold.
package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"rewind/engine/model"
	"rewind/engine/model/stream"
)

// Format names the file layout; a file of another format is refused.
// v1 held a system prompt and one prompt a call, from before requests
// carried the conversation.
const Format = "rewind.recording/v2"

// Exchange is one model call and its outcome.
type Exchange struct {
	Role string `json:"role"`
	// Messages and Tools are the request as sent (Tools by name).
	Messages  []model.Message  `json:"messages"`
	Tools     []string         `json:"tools,omitempty"`
	Text      string           `json:"text,omitempty"`
	ToolCalls []model.ToolCall `json:"toolCalls,omitempty"`
	Usage     model.Usage      `json:"usage"`
	// JSONMode is how a JSON answer was asked for (model.Response.JSONMode);
	// replay reports it again, so the replayed run's events match.
	JSONMode string `json:"jsonMode,omitempty"`
	// Error is the call's failure as the run saw it; replay fails the call
	// the same way (e.g. a failed summary skips compaction again).
	Error string `json:"error,omitempty"`
}

// File is a recording.
type File struct {
	Format string `json:"format"`
	// Source says what answered (e.g. the provider and its models).
	Source    string     `json:"source,omitempty"`
	Exchanges []Exchange `json:"exchanges"`
}

// ErrFormat marks a file that is not a usable recording.
var ErrFormat = errors.New("not a rewind recording")

// ErrOldFormat marks a recording made before requests carried the
// conversation: its calls cannot match today's requests, so it is to be
// recorded again.
var ErrOldFormat = errors.New("recorded before requests carried the conversation")

// Op is what a recording file was given for.
type Op int

const (
	// Record: the file a run records into.
	Record Op = iota + 1
	// Replay: the file a run answers from.
	Replay
)

// FileError is a recording file that cannot be used for Op. It says which
// file and why; the front end names where the file was given (the CLI,
// its flag).
type FileError struct {
	Op   Op
	Path string
	Err  error
}

func (e *FileError) Error() string {
	if e.Op == Record {
		return fmt.Sprintf("record to %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("replay %s: %v", e.Path, e.Err)
}
func (e *FileError) Unwrap() error { return e.Err }

// Load reads and checks a recording.
func Load(ctx context.Context, path string) (*File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %w", err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrFormat, err)
	}
	if f.Format == "rewind.recording/v1" {
		return nil, fmt.Errorf("%w (format %q %w; its calls cannot match today's requests)", ErrFormat, f.Format, ErrOldFormat)
	}
	if f.Format != Format {
		return nil, fmt.Errorf("%w (format %q, want %q)", ErrFormat, f.Format, Format)
	}
	for i, x := range f.Exchanges {
		if x.Role == "" {
			return nil, fmt.Errorf("%w (exchange %d has no role: the file is damaged)", ErrFormat, i+1)
		}
	}
	return &f, nil
}

// save writes f atomically: a crash mid-write leaves the old file intact.
func save(ctx context.Context, path string, f *File) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Unescaped <, > and & keep prompts legible for a class reading the file.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// A recording holds no secret and is made to be shared.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Recorder is a model.Model that records every exchange of inner.
type Recorder struct {
	inner model.Model
	path  string
	*recording
}

// recording is a Recorder's file, shared by the Recorders For makes.
type recording struct {
	mu   sync.Mutex
	file File
}

var _ model.Model = (*Recorder)(nil)

// NewRecorder records inner's exchanges to path. An existing recording is
// added to (so a run killed and resumed records into one file); any other
// existing file is refused rather than overwritten. The file is written at
// once, so a bad path fails before the run starts.
func NewRecorder(ctx context.Context, inner model.Model, path, source string) (*Recorder, error) {
	r := &Recorder{inner: inner, path: path, recording: &recording{file: File{Format: Format, Source: source, Exchanges: []Exchange{}}}}
	if _, err := os.Stat(path); err == nil {
		old, err := Load(ctx, path)
		if errors.Is(err, ErrFormat) {
			return nil, &FileError{Record, path, fmt.Errorf("it exists and is %w, so it is left alone: pick another file name", err)}
		}
		if err != nil {
			return nil, &FileError{Record, path, err}
		}
		r.file.Exchanges = old.Exchanges
		if old.Source != "" && old.Source != source {
			r.file.Source = old.Source + "; then " + source
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, &FileError{Record, path, err}
	}
	if err := save(ctx, path, &r.file); err != nil {
		return nil, &FileError{Record, path, fmt.Errorf("cannot write the recording: %w", err)}
	}
	return r, nil
}

// For records inner's exchanges into r's file, among r's: a process that
// runs two graphs, each with its own mock (the TUI on a memory: store),
// records both into the one file. A second NewRecorder of the same path
// would write over the other's exchanges.
func (r *Recorder) For(inner model.Model) *Recorder {
	return &Recorder{inner: inner, path: r.path, recording: r.recording}
}

// Complete implements model.Model.
func (r *Recorder) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := r.inner.Complete(ctx, req)
	// A call the run cancelled (kill, Ctrl-C, deadline) says nothing about
	// the model: leave it out, so the resumed run's call is the one
	// recorded. A provider's own timeout is the model's outcome and stays.
	if ctx.Err() != nil {
		return resp, err
	}
	x := Exchange{Role: req.Role, Messages: req.Messages, Tools: toolNames(req.Tools), Text: resp.Text, ToolCalls: resp.ToolCalls, Usage: resp.Usage, JSONMode: resp.JSONMode}
	if err != nil {
		x = Exchange{Role: req.Role, Messages: req.Messages, Tools: toolNames(req.Tools), Error: err.Error()}
	}
	r.mu.Lock()
	r.file.Exchanges = append(r.file.Exchanges, x)
	serr := save(context.WithoutCancel(ctx), r.path, &r.file)
	r.mu.Unlock()
	if serr != nil {
		return model.Response{}, fmt.Errorf("record the %s exchange to %s: %w; the run stopped so the recording stays complete: free the disk or record to another file, then resume", req.Role, r.path, serr)
	}
	return resp, err
}

// Unwrap is the model it records: what answers, and is named as the
// model of a role (a compaction's event names its summarizer).
func (r *Recorder) Unwrap() model.Model { return r.inner }

// Len is how many exchanges the recording holds.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.file.Exchanges)
}

// ErrNotRecorded is matched by errors.Is for a *MismatchError.
var ErrNotRecorded = errors.New("call not in the recording")

// ErrRecordedFailure is a call that failed when it was recorded.
var ErrRecordedFailure = errors.New("recorded call failed")

// MismatchError refuses a call the recording does not hold: the run is
// not the one the recording was made from (same thread history and
// input), or the recording is to be made again.
type MismatchError struct {
	File string
	Role string
	// Call is the run's model call number (parallel executors arrive in any
	// order); RoleCall counts the calls of Role alone.
	Call, RoleCall int
	// Diff says how the prompt differs from the nearest recorded one.
	Diff string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("replay: model call %d (%s call %d) is not in the recording %s: %s",
		e.Call, e.Role, e.RoleCall, e.File, e.Diff)
}

// Is makes errors.Is(err, ErrNotRecorded) work.
func (e *MismatchError) Is(target error) bool { return target == ErrNotRecorded }

// Replayer is a model.Model answering from a recording. It is safe for
// concurrent use.
type Replayer struct {
	path string
	file *File

	mu       sync.Mutex
	byKey    map[string][]int // role+prompt → exchange indices, recorded order
	used     []bool
	calls    int
	roleCall map[string]int
}

var _ model.Model = (*Replayer)(nil)

// Open loads a recording for replay.
func Open(ctx context.Context, path string) (*Replayer, error) {
	f, err := Load(ctx, path)
	if err != nil {
		return nil, &FileError{Replay, path, err}
	}
	r := &Replayer{path: path, file: f, byKey: map[string][]int{}, used: make([]bool, len(f.Exchanges)), roleCall: map[string]int{}}
	for i, x := range f.Exchanges {
		k := key(x.Role, prompt(x.Messages, x.Tools))
		r.byKey[k] = append(r.byKey[k], i)
	}
	return r, nil
}

func key(role, prompt string) string { return role + "\x00" + prompt }

// prompt is a request as the text a replay matches and diffs: every
// message as model.Render writes it, then the tools offered.
func prompt(ms []model.Message, tools []string) string {
	s := model.Render(ms)
	if len(tools) > 0 {
		s += "tools: " + strings.Join(tools, ", ") + "\n"
	}
	return s
}

func toolNames(ts []model.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// Source says what answered when the recording was made.
func (r *Replayer) Source() string { return r.file.Source }

// Len is how many exchanges the recording holds.
func (r *Replayer) Len() int { return len(r.file.Exchanges) }

// Unused returns the exchanges no call has asked for yet.
func (r *Replayer) Unused() []Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Exchange
	for i, u := range r.used {
		if !u {
			out = append(out, r.file.Exchanges[i])
		}
	}
	return out
}

// Complete implements model.Model.
func (r *Replayer) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	if err := ctx.Err(); err != nil {
		return model.Response{}, err
	}
	r.mu.Lock()
	r.calls++
	r.roleCall[req.Role]++
	idx := -1
	asked := prompt(req.Messages, toolNames(req.Tools))
	for _, i := range r.byKey[key(req.Role, asked)] {
		if !r.used[i] {
			idx = i
			break
		}
	}
	if idx < 0 {
		err := &MismatchError{File: r.path, Role: req.Role, Call: r.calls, RoleCall: r.roleCall[req.Role], Diff: r.explain(req.Role, asked)}
		r.mu.Unlock()
		return model.Response{}, err
	}
	r.used[idx] = true
	x := r.file.Exchanges[idx]
	r.mu.Unlock()

	if listen := stream.Listener(ctx); listen != nil {
		call := stream.NewCall()
		if x.Text != "" {
			listen(stream.Delta{Call: call, Role: req.Role, Text: x.Text})
		}
		for _, c := range x.ToolCalls {
			listen(stream.Delta{Call: call, Role: req.Role, Text: c.Name + "(" + c.Arguments + ") "})
		}
		listen(stream.Delta{Call: call, Role: req.Role, Done: true, Err: x.Error})
	}
	if x.Error != "" {
		return model.Response{}, fmt.Errorf("replay: this %s call failed when it was recorded (%s): %w", req.Role, x.Error, ErrRecordedFailure)
	}
	return model.Response{Text: x.Text, ToolCalls: x.ToolCalls, Usage: x.Usage, JSONMode: x.JSONMode}, nil
}

// explain says why a request of role, as prompt renders it, has no
// answer; r.mu is held.
func (r *Replayer) explain(role, asked string) string {
	if n := len(r.byKey[key(role, asked)]); n > 0 {
		return fmt.Sprintf("the recording answers this exact %s request %d time(s) and the run asked once more", role, n)
	}
	best, bestLen := -1, -1
	var bestText string
	for i, x := range r.file.Exchanges {
		if x.Role != role {
			continue
		}
		text := prompt(x.Messages, x.Tools)
		n := commonPrefix(text, asked)
		// Prefer the closest prompt, and among equals one not yet used.
		if n > bestLen || (n == bestLen && r.used[best] && !r.used[i]) {
			best, bestLen, bestText = i, n, text
		}
	}
	if best < 0 {
		return fmt.Sprintf("the recording holds no %s call at all", role)
	}
	return fmt.Sprintf("its request differs from recorded exchange %d: %s", best+1, Diff(bestText, asked))
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// Diff is a one-line account of where two texts first differ: line,
// column and a little context from each side.
func Diff(recorded, asked string) string {
	n := commonPrefix(recorded, asked)
	// Back up to a rune boundary so the snippets stay valid UTF-8.
	for n > 0 && n < len(recorded) && !startsRune(recorded[n]) {
		n--
	}
	line := strings.Count(asked[:n], "\n") + 1
	col := n - strings.LastIndex(asked[:n], "\n")
	return fmt.Sprintf("at line %d, column %d: recorded %s, asked %s", line, col, snippet(recorded, n), snippet(asked, n))
}

func startsRune(b byte) bool { return b&0xC0 != 0x80 }

// snippet is s around byte offset at: a little before, more after, quoted
// so newlines stay on one line.
func snippet(s string, at int) string {
	const before, after = 20, 40
	from := max(0, at-before)
	for from > 0 && !startsRune(s[from]) {
		from--
	}
	to := min(len(s), at+after)
	for to < len(s) && !startsRune(s[to]) {
		to++
	}
	out := fmt.Sprintf("%q", s[from:to])
	if from > 0 {
		out = "…" + out
	}
	if to < len(s) {
		out += "…"
	}
	if at >= len(s) {
		out += " (ends here)"
	}
	return out
}
