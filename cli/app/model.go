package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"rewind/engine/model"
	"rewind/engine/model/provider"
	"rewind/engine/ticket"
)

// ModelFlags are the flags that choose and shape the model: --provider,
// --record, --replay, and the mock's --mock-latency and --mock-fail.
type ModelFlags struct {
	Provider       string
	Record, Replay string
	MockLatency    time.Duration
	MockFail       []string
}

// ErrUsage is matched by errors.Is for a model flag that is wrong as given
// (the CLI exits 2 for it); it is provider.ErrUsage.
var ErrUsage = provider.ErrUsage

// Build returns the run's model: the mock, an OpenAI-compatible server or a
// replayed recording, optionally recorded (see engine/model/provider).
func (f ModelFlags) Build(ctx context.Context) (model.Model, error) {
	var mockFlags []string
	if f.MockLatency != 0 {
		mockFlags = append(mockFlags, "--mock-latency")
	}
	if len(f.MockFail) > 0 {
		mockFlags = append(mockFlags, "--mock-fail")
	}
	return provider.Build(ctx, provider.Options{Provider: f.Provider, Record: f.Record, Replay: f.Replay,
		MockFlags: mockFlags, NewMock: f.mock, Getenv: os.Getenv})
}

func (f ModelFlags) mock() (model.Model, error) {
	m := ticket.NewMock()
	m.Latency = f.MockLatency
	for _, role := range f.MockFail {
		switch role {
		case model.RolePlanner, model.RoleExecutor, model.RoleCritic, model.RoleSummarizer, model.RoleReply:
			m.FailRole(role, -1)
		default:
			return nil, usageError(fmt.Sprintf("--mock-fail %q: not a model role (planner, executor, critic, summarizer, reply)", role))
		}
	}
	return m, nil
}

// Args are the flags as given, for a worker process to build the same
// model.
func (f ModelFlags) Args() []string {
	var a []string
	if f.MockLatency != 0 {
		a = append(a, "--mock-latency", f.MockLatency.String())
	}
	for _, role := range f.MockFail {
		a = append(a, "--mock-fail", role)
	}
	for _, kv := range [][2]string{{"--provider", f.Provider}, {"--record", f.Record}, {"--replay", f.Replay}} {
		if kv[1] != "" {
			a = append(a, kv[0], kv[1])
		}
	}
	return a
}

// usageError is a flag given wrong; its text is the whole message.
type usageError string

func (e usageError) Error() string        { return string(e) }
func (e usageError) Is(target error) bool { return target == ErrUsage }
