package demo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"rewind/demo/research"
	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
	"rewind/store"
)

// Step is one line of a lesson's script.
type Step struct {
	// Do is what to press or type. A command step leaves it empty:
	// Lesson.Script writes its command line there, naming the store.
	Do string `json:"do"`
	// See is what to look at, and what it shows.
	See string `json:"see"`
	// Command is the rewind command a command step runs: its words after
	// "rewind", without --store (Script adds the lesson store's, so the
	// line works as printed in any terminal).
	Command []string `json:"command,omitempty"`
	// Expect is what the command prints (each a substring of its output)
	// and Exit its exit status (ExitKilled: it SIGKILLs itself): what See
	// promises, as a test of the printed script checks it.
	Expect []string `json:"expect,omitempty"`
	Exit   int      `json:"exit,omitempty"`
}

// ExitKilled is a command step's Exit when the command ends killed by
// SIGKILL (--kill-at), as a shell reports it: 128 + 9.
const ExitKilled = 137

// Script is the lesson's steps as printed for the lesson store spec: each
// command step's Do is its command line, with --store naming that store.
// Every command names the store rather than reading a default the lesson
// set: copied into another terminal, or run after the lesson, it reads the
// threads the lesson prepared, and nothing hidden decides which store a
// command reads.
func (l Lesson) Script(spec string) []Step {
	out := make([]Step, len(l.Steps))
	for i, st := range l.Steps {
		if len(st.Command) > 0 {
			st.Do = CommandLine(append(append([]string{}, st.Command...), "--store", spec))
		}
		out[i] = st
	}
	return out
}

// CommandLine is "rewind" and args as a POSIX shell reads them: a word
// that needs it is single-quoted.
func CommandLine(args []string) string {
	words := []string{"rewind"}
	for _, a := range args {
		words = append(words, shellWord(a))
	}
	return strings.Join(words, " ")
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Lesson is one lesson: its script and its headless run.
type Lesson struct {
	Name   string `json:"name"`
	Title  string `json:"title"`
	Proves string `json:"proves"`
	// Thread is the thread the lesson opens.
	Thread string `json:"thread"`
	Steps  []Step `json:"steps"`
	// Processes: the lesson kills real worker processes (Env.Exe).
	Processes bool `json:"processes,omitempty"`
	// Graph is the graph the lesson's threads are of, when not the
	// ticket's: the TUI opens it by that name (`rewind tui --graph`).
	Graph string `json:"graph,omitempty"`
	run   func(ctx context.Context, env Env) (Verdict, error)
}

// Env is where a lesson runs: its own store, and what a lesson that kills
// workers needs to start them.
type Env struct {
	// Spec is the store's spec (workers open it themselves).
	Spec string
	Open func(ctx context.Context) (store.Store, error)
	// Exe is the rewind binary; Sources the source versions file; Environ
	// the workers' environment. Only lessons with Processes use them.
	Exe     string
	Sources string
	Environ []string
	// Say reports progress (may be nil).
	Say func(string)
}

// Verdict is how a lesson ended.
type Verdict struct {
	Lesson string `json:"lesson"`
	Passed bool   `json:"passed"`
	// Line is the one-line verdict.
	Line    string         `json:"line"`
	Figures map[string]any `json:"figures"`
	// At is the checkpoint the lesson opens on (0: the thread's newest),
	// for a lesson whose first step is on another branch than the newest.
	At int64 `json:"at,omitempty"`
}

// Run runs the lesson headless: it prepares the lesson's threads in env's
// store and checks what they show.
func (l Lesson) Run(ctx context.Context, env Env) (Verdict, error) {
	if l.Processes && (env.Exe == "" || env.Sources == "") {
		return Verdict{}, fmt.Errorf("lesson %s kills worker processes: it needs the rewind binary and a source versions file", l.Name)
	}
	v, err := l.run(ctx, env)
	v.Lesson = l.Name
	if v.Figures == nil {
		v.Figures = map[string]any{}
	}
	return v, err
}

// Lessons lists every lesson, in teaching order.
func Lessons() []Lesson { return lessons }

// Find looks a lesson up by name.
func Find(name string) (Lesson, bool) {
	for _, l := range lessons {
		if l.Name == name {
			return l, true
		}
	}
	return Lesson{}, false
}

// Names lists the lessons' names, for an error message.
func Names() string {
	names := make([]string, len(lessons))
	for i, l := range lessons {
		names[i] = l.Name
	}
	return strings.Join(names, ", ")
}

// verdict builds a Verdict from checks: passed when none failed, its line
// the good news or the first failure.
func verdict(figures map[string]any, good string, failures []string) Verdict {
	if len(failures) == 0 {
		return Verdict{Passed: true, Line: "PASS: " + good, Figures: figures}
	}
	return Verdict{Passed: false, Line: "FAIL: " + strings.Join(failures, "; "), Figures: figures}
}

// withEngine opens the lesson's store with the mock model.
func withEngine(ctx context.Context, env Env, m model.Model, fn func(*engine.Engine, store.Store) error) error {
	st, err := env.Open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if m == nil {
		m = ticket.NewMock()
	}
	e, err := ticket.NewEngine(st, m)
	if err != nil {
		return err
	}
	return fn(e, st)
}

// fresh clears the lesson's threads, so a lesson run twice starts over.
func fresh(ctx context.Context, st store.Store, threads ...string) error {
	for _, t := range threads {
		if err := st.DeleteThread(ctx, t); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("clear lesson thread %q: %w", t, err)
		}
	}
	return nil
}

// runResearch runs the research graph's session: the question to the
// publish gate, a revise answer, an approve answer; then checks what the
// lesson points at.
func runResearch(ctx context.Context, env Env) (Verdict, error) {
	fig := map[string]any{}
	var fails []string
	st, err := env.Open(ctx)
	if err != nil {
		return Verdict{}, err
	}
	defer st.Close()
	if err := fresh(ctx, st, ThreadResearch); err != nil {
		return Verdict{}, err
	}
	m := research.NewMock()
	e, err := research.NewEngine(st, m)
	if err != nil {
		return Verdict{}, err
	}
	in, err := research.Input(research.Question)
	if err != nil {
		return Verdict{}, err
	}
	first, err := e.Run(ctx, ThreadResearch, in, engine.RunConfig{})
	if err != nil {
		return Verdict{}, err
	}
	at, err := e.Get(ctx, ThreadResearch, first.Checkpoint)
	if err != nil {
		return Verdict{}, err
	}
	s, err := research.Decode(at.Values)
	if err != nil {
		return Verdict{}, err
	}
	calls := 0
	for _, msg := range s.Messages {
		calls += len(msg.ToolCalls)
	}
	fig["notes"], fig["toolCalls"], fig["gateAt"], fig["status"] = len(s.Notes), calls, first.Checkpoint, first.Status
	if first.Status != engine.RunAwaitingApproval || s.Published != "" {
		fails = append(fails, fmt.Sprintf("the question ended %s at @%d, want awaiting-approval before publish with nothing published", first.Status, first.Checkpoint))
	}
	if len(s.Notes) != 3 || len(s.Subquestions) != 3 {
		fails = append(fails, fmt.Sprintf("%d notes of %d sub-questions, want 3 merged into notes", len(s.Notes), len(s.Subquestions)))
	}
	for _, r := range []research.Review{{Decision: research.Revise, Note: research.ReviseNote}, {Decision: research.Approve}} {
		res, err := e.Answer(ctx, ThreadResearch, research.Answer(r), engine.RunConfig{})
		if err != nil {
			return Verdict{}, fmt.Errorf("answer %s: %w", r.Decision, err)
		}
		fig[r.Decision+"Status"], fig[r.Decision+"At"] = res.Status, res.Checkpoint
	}
	head, err := e.Latest(ctx, ThreadResearch)
	if err != nil {
		return Verdict{}, err
	}
	end, err := research.Decode(head.Values)
	if err != nil {
		return Verdict{}, err
	}
	fig["revisions"], fig["modelCalls"] = end.Revisions, model.Counts(m.Calls()).String()
	if fig[research.Revise+"Status"] != engine.RunAwaitingApproval || end.Revisions != 1 {
		fails = append(fails, fmt.Sprintf("revise ended %v with %d revision(s), want the writer again and the gate again", fig[research.Revise+"Status"], end.Revisions))
	}
	if fig[research.Approve+"Status"] != engine.RunDone || end.Published == "" || end.Published != end.Draft {
		fails = append(fails, fmt.Sprintf("approve ended %v, published %d bytes, want the draft published", fig[research.Approve+"Status"], len(end.Published)))
	}
	good := fmt.Sprintf("3 parallel searches merged into %d notes; the writer's loop ended after %d tool calls; stopped before publish at @%d; revise looped back to the writer (%d revision); approve published at @%v",
		len(s.Notes), calls, first.Checkpoint, end.Revisions, fig[research.Approve+"At"])
	return verdict(fig, good, fails), nil
}
