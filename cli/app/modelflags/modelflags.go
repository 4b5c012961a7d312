// Package modelflags builds the model a run talks to from the CLI's flags and
// the environment: the deterministic mock (the default), an
// OpenAI-compatible server, or a recorded session replayed offline; and,
// when asked, a recorder around whichever it is. The CLI and the tests use
// this one constructor, so a test of it is a test of what `rewind run`
// does.
package modelflags

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"rewind/engine/model"
	"rewind/engine/model/openai"
	"rewind/engine/model/replay"
)

// Provider names.
const (
	Mock   = "mock"
	OpenAI = "openai"
	// EnvProvider picks the provider when --provider is not given.
	EnvProvider = "REWIND_PROVIDER"
)

// Options are the flags that choose the model.
type Options struct {
	// Provider is --provider; "" falls back to $REWIND_PROVIDER, then mock.
	Provider string
	// Record and Replay are --record FILE and --replay FILE.
	Record, Replay string
	// MockFlags names the mock-only flags given (e.g. "--mock-fail"), so
	// combining them with another model is a usage error, not ignored.
	MockFlags []string
	// NewMock builds the mock as the mock flags configure it.
	NewMock func() (model.Model, error)
	// Getenv reads the environment (os.Getenv); nil reads nothing.
	Getenv func(string) string
	// JSONMode is --json-mode: how the openai provider asks for JSON
	// (schema, object or prompt); "" lets it find out.
	JSONMode string
	// Notify, when set, is told what was chosen for the user (a default
	// model); the CLI prints it.
	Notify func(string)
}

// ErrUsage is matched by errors.Is for a bad combination of flags; the CLI
// answers it with its usage exit code.
var ErrUsage = errors.New("usage")

type usageError string

func (e usageError) Error() string        { return string(e) }
func (e usageError) Is(target error) bool { return target == ErrUsage }

func usagef(format string, a ...any) error { return usageError(fmt.Sprintf(format, a...)) }

// Build returns the model for a run.
func Build(ctx context.Context, o Options) (model.Model, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	name, from := strings.ToLower(strings.TrimSpace(o.Provider)), "--provider"
	if name == "" {
		name, from = strings.ToLower(strings.TrimSpace(getenv(EnvProvider))), EnvProvider
	}
	if name == "" {
		name = Mock
	}
	if name != Mock && name != OpenAI {
		return nil, usagef("%s %q is not a provider: choose %s (offline, the default) or %s (an OpenAI-compatible server)", from, name, Mock, OpenAI)
	}
	mockFlags := strings.Join(o.MockFlags, " and ")
	are := "is"
	if len(o.MockFlags) > 1 {
		are = "are"
	}
	via := ""
	if from == EnvProvider {
		via = " (from " + EnvProvider + ")"
	}
	if o.JSONMode != "" && !slices.Contains(model.JSONModes, o.JSONMode) {
		return nil, usagef("--json-mode %q is not a JSON mode: choose %s, or leave it out to let rewind find out", o.JSONMode, strings.Join(model.JSONModes, ", "))
	}
	if o.JSONMode != "" && (name != OpenAI || o.Replay != "") {
		who := "the mock"
		if o.Replay != "" {
			who = "--replay"
		}
		return nil, usagef("--json-mode shapes requests to an OpenAI-compatible server, which %s does not send: use it with --provider openai, or drop it", who)
	}
	if o.Record != "" && o.Replay != "" {
		return nil, usagef("--record and --replay together would only copy the recording: replay with --replay FILE, or record a new run with --record FILE")
	}
	if o.Replay != "" {
		// --replay beats $REWIND_PROVIDER, but not an explicit --provider.
		if name == OpenAI && from == "--provider" {
			return nil, usagef("--replay answers from the recording offline, so --provider openai would not be used: drop one of them")
		}
		if mockFlags != "" {
			return nil, usagef("%s %s for the mock model, which --replay does not use: drop %s", mockFlags, are, mockFlags)
		}
		return replay.Open(ctx, o.Replay)
	}

	var m model.Model
	var source string
	switch name {
	case OpenAI:
		if mockFlags != "" {
			return nil, usagef("%s %s for the mock model, not for the openai provider%s: drop %s, or use --provider mock", mockFlags, are, via, mockFlags)
		}
		cfg, err := openai.FromEnv(getenv)
		if err != nil {
			return nil, fmt.Errorf("openai provider: %w", err)
		}
		cfg.JSONMode = o.JSONMode
		note, err := openai.ResolveModels(ctx, &cfg)
		if err != nil {
			return nil, fmt.Errorf("openai provider: %w", err)
		}
		if note != "" && o.Notify != nil {
			o.Notify(note)
		}
		p, err := openai.New(cfg)
		if err != nil {
			return nil, err
		}
		m, source = p, "openai-compatible server, models "+models(p.Models())
	default:
		if o.NewMock == nil {
			return nil, errors.New("provider: no mock constructor given")
		}
		var err error
		if m, err = o.NewMock(); err != nil {
			return nil, err
		}
		source = "mock"
	}
	if o.Record != "" {
		return replay.NewRecorder(ctx, m, o.Record, source)
	}
	return m, nil
}

// models lists role=model without the server's address: a recording names
// what answered, not where.
func models(ms map[string]string) string {
	parts := make([]string, 0, len(ms))
	for r, m := range ms {
		parts = append(parts, r+"="+m)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
