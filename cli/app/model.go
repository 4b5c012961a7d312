package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"rewind/cli/app/modelflags"
	"rewind/engine/model"
	"rewind/engine/ticket"
)

// ModelFlags are the flags that choose and shape the model: --provider,
// --json-mode, --record, --replay, the mock's --mock-latency and
// --mock-fail, and --max-tokens-per-turn, the budget of every turn the
// engine runs with this model.
type ModelFlags struct {
	Provider         string
	JSONMode         string
	Record, Replay   string
	MockLatency      time.Duration
	MockJitter       time.Duration
	MockSeed         uint64
	MockFail         []string
	MaxTokensPerTurn int
	// Notes is where a choice made for the user (a default model) is
	// said; nil is os.Stderr.
	Notes io.Writer
	// Mock builds the mock of a graph other than the ticket's (nil: the
	// ticket's); the mock flags shape it alike.
	Mock func() *model.Mock
	// graph is the graph Mock is of (nil: the ticket's): MockFail names
	// its roles.
	graph *Graph
}

// ErrUsage is matched by errors.Is for a model flag that is wrong as given
// (the CLI exits 2 for it); it is modelflags.ErrUsage.
var ErrUsage = modelflags.ErrUsage

// Build returns the run's model: the mock, an OpenAI-compatible server or a
// replayed recording, optionally recorded (see cli/app/modelflags).
func (f ModelFlags) Build(ctx context.Context) (model.Model, error) {
	var mockFlags []string
	if f.MockLatency != 0 {
		mockFlags = append(mockFlags, "--mock-latency")
	}
	if f.MockJitter != 0 {
		mockFlags = append(mockFlags, "--mock-jitter")
	}
	if len(f.MockFail) > 0 {
		mockFlags = append(mockFlags, "--mock-fail")
	}
	if f.MockLatency < 0 || f.MockJitter < 0 {
		return nil, usageError("--mock-latency and --mock-jitter take a duration of 0 or more, e.g. 300ms")
	}
	if f.MaxTokensPerTurn < 0 {
		return nil, usageError(fmt.Sprintf("--max-tokens-per-turn %d is negative: give the most tokens a turn may use, e.g. 20000, or 0 for no limit", f.MaxTokensPerTurn))
	}
	notes := f.Notes
	if notes == nil {
		notes = os.Stderr
	}
	return modelflags.Build(ctx, modelflags.Options{Provider: f.Provider, JSONMode: f.JSONMode, Record: f.Record, Replay: f.Replay,
		MockFlags: mockFlags, NewMock: f.mock, Getenv: os.Getenv,
		Notify: func(s string) { fmt.Fprintf(notes, "rewind: %s\n", s) }})
}

func (f ModelFlags) mock() (model.Model, error) {
	var fail func(role string, n int)
	var m model.Model
	if f.Mock != nil {
		g := f.Mock()
		g.Latency, g.Jitter, g.Seed = f.MockLatency, f.MockJitter, f.MockSeed
		fail, m = g.FailRole, g
	} else {
		t := ticket.NewMock()
		t.Latency, t.Jitter, t.Seed = f.MockLatency, f.MockJitter, f.MockSeed
		fail, m = t.FailRole, t
	}
	if err := f.canFail(f.graph); err != nil {
		return nil, err
	}
	for _, role := range f.MockFail {
		fail(role, -1)
	}
	return m, nil
}

// canFail refuses a --mock-fail role g's mock does not play (it would
// fail nothing), naming the roles it does.
func (f ModelFlags) canFail(g *Graph) error {
	roles := g.MockRoles()
	for _, role := range f.MockFail {
		if !slices.Contains(roles, role) {
			return usageError(fmt.Sprintf("--mock-fail %q: not a model role of graph %s, whose mock plays %s", role, g.name(), strings.Join(roles, ", ")))
		}
	}
	return nil
}

// Args are the flags as given, for a worker process to build the same
// model.
func (f ModelFlags) Args() []string {
	var a []string
	if f.MockLatency != 0 {
		a = append(a, "--mock-latency", f.MockLatency.String())
	}
	if f.MockJitter != 0 {
		a = append(a, "--mock-jitter", f.MockJitter.String(), "--mock-seed", strconv.FormatUint(f.MockSeed, 10))
	}
	for _, role := range f.MockFail {
		a = append(a, "--mock-fail", role)
	}
	for _, kv := range [][2]string{{"--provider", f.Provider}, {"--json-mode", f.JSONMode}, {"--record", f.Record}, {"--replay", f.Replay}} {
		if kv[1] != "" {
			a = append(a, kv[0], kv[1])
		}
	}
	if f.MaxTokensPerTurn != 0 {
		a = append(a, "--max-tokens-per-turn", strconv.Itoa(f.MaxTokensPerTurn))
	}
	return a
}

// usageError is a flag given wrong; its text is the whole message.
type usageError string

func (e usageError) Error() string        { return string(e) }
func (e usageError) Is(target error) bool { return target == ErrUsage }
