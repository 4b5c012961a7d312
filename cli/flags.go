package cli

// The flag groups several commands share. A command adds the groups that
// apply to it and nothing else, so a flag it would ignore is refused.

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/engine"
	"rewind/engine/seal"
	"rewind/engine/ticket"
	"rewind/engine/worker"
	"rewind/store"
	"rewind/store/backend"
	"rewind/tui/termtext"
)

// addStore adds --store and --tenant, for every command that opens a
// store.
func addStore(c *cobra.Command, spec *string) {
	addStoreOnly(c, spec)
	c.Flags().String("tenant", "", "the `TENANT` whose threads the command reads and writes; another tenant's are not found (default $"+app.EnvTenant+", then default)")
}

// addStoreOnly adds --store without --tenant, for the commands that
// manage the store's tenants.
func addStoreOnly(c *cobra.Command, spec *string) {
	c.Flags().StringVar(spec, "store", "", "the store `SPEC`: memory:, sqlite:PATH or postgres://USER[:PASS]@HOST:PORT/DB (default $REWIND_STORE, $DATABASE_URL, then sqlite under $XDG_STATE_HOME/rewind)")
	c.Flags().String("key-file", "", "the `FILE` of the key that encrypts messages and summaries at rest and reads them back (default $"+app.KeyFileEnv+"; make one: head -c 32 /dev/urandom | base64 > FILE)")
	c.Flags().String("sqlite-sync", "", "how a SQLite store's commits reach the disk (`MODE`): full, commits fsynced (survive a power cut), or normal, faster, but an OS crash or power cut may lose the last commits (default $"+backend.SyncEnv+", then full)")
}

// checkStoreFlag refuses --store given empty: a script's unset variable
// (--store "$STORE") must not fall back to the user's default store.
func checkStoreFlag(c *cobra.Command) error {
	if y := c.Flags().Lookup("sqlite-sync"); y != nil && y.Changed {
		mode, err := sqliteSync(y.Value.String())
		if err != nil {
			return err
		}
		// The environment carries it to this process's stores and to the
		// workers and drill processes it starts.
		if err := os.Setenv(backend.SyncEnv, mode); err != nil {
			return err
		}
	}
	if k := c.Flags().Lookup("key-file"); k != nil && k.Changed {
		if strings.TrimSpace(k.Value.String()) == "" {
			return usagef("--key-file is given but empty (an unset variable?): give the key's file, or leave --key-file out")
		}
		if _, err := seal.LoadFile(k.Value.String()); err != nil {
			return usagef("--key-file: %v", err)
		}
		// As --sqlite-sync: the environment carries it to the workers.
		if err := os.Setenv(app.KeyFileEnv, k.Value.String()); err != nil {
			return err
		}
	}
	if t := c.Flags().Lookup("tenant"); t != nil && t.Changed {
		v := strings.TrimSpace(t.Value.String())
		if err := store.CheckTenant(v); err != nil {
			return usagef("--tenant %q: a tenant is 1 to 63 letters, digits, _ or -, starting with a letter: give one `rewind tenant list` lists, or leave --tenant out for the default tenant", named(v))
		}
		// As --sqlite-sync: the workers and drills it starts inherit it.
		if err := os.Setenv(app.EnvTenant, v); err != nil {
			return err
		}
	}
	f := c.Flags().Lookup("store")
	if f == nil || !f.Changed || strings.TrimSpace(f.Value.String()) != "" {
		return nil
	}
	return usagef("--store is given but empty (an unset variable?): give memory:, sqlite:PATH or postgres://USER@HOST:PORT/DB, or leave --store out to use $REWIND_STORE, $DATABASE_URL or the default store")
}

// sqliteSync reads --sqlite-sync.
func sqliteSync(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "full", "normal":
		return strings.ToLower(strings.TrimSpace(v)), nil
	}
	return "", usagef("--sqlite-sync %q: give full (every commit on disk, the default) or normal (faster; an OS crash or power cut may lose the last commits)", named(v))
}

// readInput reads --input-file: PATH, or - for stdin. It reads no more
// than one byte past the limit, so a huge file is refused without being
// read whole; a final line break (a file's, a heredoc's) is not part of
// the message.
func readInput(path string, stdin io.Reader) (string, error) {
	return readFileFlag("--input-file", "message", path, stdin)
}

// readFileFlag reads what flag (--input-file, --value-file) names: PATH,
// or - for stdin; what is what it holds ("message", "value"), for the
// errors. The limit is termtext.MaxInput, as readInput's.
func readFileFlag(flag, what, path string, stdin io.Reader) (string, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return "", usagef("%s: %v: name a readable file, or - for stdin", flag, err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, termtext.MaxInput+2))
	switch {
	case err != nil && path != "-":
		return "", usagef("%s: %v: name a readable file, or - for stdin", flag, err)
	case err != nil:
		return "", fmt.Errorf("%s -: read stdin: %w", flag, err)
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if len(s) > termtext.MaxInput {
		// Read only so far: its whole size is not known.
		return "", usagef("the %s in %s is longer than the %s (%d bytes) one %s may hold: shorten it", what, path, termtext.Size(termtext.MaxInput), termtext.MaxInput, what)
	}
	return s, nil
}

// addJSON adds --json, for every command with something to report.
func addJSON(c *cobra.Command, on *bool) {
	c.Flags().BoolVar(on, "json", false, "machine-readable output")
}

// addModel adds the flags that choose the model, for the commands that
// run the graph.
func addModel(c *cobra.Command, m *app.ModelFlags) {
	f := c.Flags()
	f.StringVar(&m.Provider, "provider", "", "the model `P`: mock (offline, the default) or openai (an OpenAI-compatible server set up by environment; see README \"Real models\"); default $REWIND_PROVIDER")
	f.StringVar(&m.JSONMode, "json-mode", "", "with --provider openai, ask for JSON answers by `MODE`: schema (response_format json_schema, strict), object (json_object) or prompt (the prompt alone); default: the strongest the server accepts")
	f.IntVar(&m.MaxTokensPerTurn, "max-tokens-per-turn", 0, "stop the run before its next step once the turn has used `N` tokens (prompt and completion, all roles); resume to carry on")
	f.StringVar(&m.Record, "record", "", "save every model exchange to `FILE` (added to if it is a recording)")
	f.StringVar(&m.Replay, "replay", "", "answer model calls from the recording `FILE`, offline; refuses calls it does not hold")
	f.DurationVar(&m.MockLatency, "mock-latency", 0, "wait `D` per mock model call (e.g. 300ms: time to kill a run by hand)")
	f.DurationVar(&m.MockJitter, "mock-jitter", 0, "add up to `D` to each mock call's wait, different per task and the same on every run with one --mock-seed (parallel executors finish apart, so a hand kill during the fan-out catches some done and some not)")
	f.Uint64Var(&m.MockSeed, "mock-seed", 1, "the `N` that picks --mock-jitter's waits")
	f.StringArrayVar(&m.MockFail, "mock-fail", nil, "make every call of a model `ROLE` fail, one the graph's mock plays ("+perGraph(func(g graphEntry) string { return strings.Join(g.app.MockRoles(), ", ") })+")")
}

// addInterrupts adds the static breakpoints of a run.
func addInterrupts(c *cobra.Command, before, after *[]string) {
	c.Flags().StringArrayVar(before, "interrupt-before", nil, "pause before `NODE` runs, a node of the graph ("+perGraph(graphEntry.nodeNames)+")")
	c.Flags().StringArrayVar(after, "interrupt-after", nil, "pause after `NODE` ran")
}

// checkInterrupts refuses a breakpoint at a node the graph lacks: a
// command line given wrong (exit 2), with the nodes it has, before any
// run starts.
func checkInterrupts(g *engine.Graph, before, after []string) error {
	for _, f := range []struct {
		flag  string
		nodes []string
	}{{"--interrupt-before", before}, {"--interrupt-after", after}} {
		for _, n := range f.nodes {
			if !g.HasNode(n) {
				return usagef("%s %s: no such node; the nodes are %s", f.flag, idText(n), strings.Join(g.Nodes(), ", "))
			}
		}
	}
	return nil
}

// killAtUsage is --kill-at's help: the points by name.
func killAtUsage(what string) string {
	return what + " at kill `POINT` (POINT@N: the Nth time): " + worker.Names()
}

// turnFlags are a new turn's flags: run and fork.
type turnFlags struct {
	input, inputFile string
	attach           []string
	draft            bool
	authTTL          time.Duration
	scenario         string
}

func (t *turnFlags) add(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&t.input, "input", "", "the turn's text, at most 64 KB ("+perGraph(func(g graphEntry) string { return g.input })+")")
	f.StringVar(&t.inputFile, "input-file", "", "read --input's text from `PATH`, or - for stdin (a long text: no command-line limit)")
	f.StringArrayVar(&t.attach, "attach", nil, "attach a reference (`REF`, e.g. blob://tickets/att-1.png); repeatable")
	f.BoolVar(&t.draft, "draft", false, "end with the reply created as an outgoing draft, behind the approval gate")
	f.DurationVar(&t.authTTL, "auth-ttl", 0, "with --draft: record the authorization grant it is written under, expiring after `D` (e.g. 1h)")
	f.StringVar(&t.scenario, "scenario", "", "what the thread is about from this turn on: `S` is ticket (a customer's support ticket, the default) or site-log (a construction site's daily log); later turns keep it")
}

// turn is the turn the flags describe, its message from --input or
// --input-file (stdin is c's); empty says what to give instead.
func (t *turnFlags) turn(c *cobra.Command, empty string) (ticket.Turn, error) {
	text := t.input
	if t.inputFile != "" {
		if t.input != "" {
			return ticket.Turn{}, usagef("give the message once: --input TEXT or --input-file PATH, not both")
		}
		var err error
		if text, err = readInput(t.inputFile, c.InOrStdin()); err != nil {
			return ticket.Turn{}, err
		}
	}
	if strings.TrimSpace(text) == "" {
		return ticket.Turn{}, usagef("%s", empty)
	}
	// The limit is the TUI's too; a longer message is refused whole,
	// never cut.
	if why := termtext.TooLong(len(text)); why != "" {
		return ticket.Turn{}, usagef("the message is %s: shorten it", why)
	}
	if !utf8.ValidString(text) {
		return ticket.Turn{}, usagef("the message is not UTF-8 text: convert it (e.g. iconv -t UTF-8) and give it again")
	}
	if t.authTTL != 0 && !t.draft {
		return ticket.Turn{}, usagef("--auth-ttl is the grant a draft is written under: add --draft, or drop --auth-ttl")
	}
	if t.authTTL < 0 {
		return ticket.Turn{}, usagef("--auth-ttl %s is negative: give how long the grant lasts, e.g. 1h", t.authTTL)
	}
	if err := ticket.CheckScenario(t.scenario); err != nil {
		return ticket.Turn{}, usagef("--scenario: %v", err)
	}
	turn := ticket.NewTurn(text, t.attach, t.draft, t.authTTL, time.Now())
	turn.Scenario = t.scenario
	if err := turn.Validate(time.Now()); err != nil {
		return ticket.Turn{}, usageOf(err)
	}
	return turn, nil
}

// checkReason refuses a --reason longer than one message may hold
// (termtext.MaxInput, the TUI's limit on a reason too): a reason is stored
// with the decision or the run's end, in the conversation, and printed.
func checkReason(reason string) error {
	if why := termtext.TooLong(len(reason)); why != "" {
		return usagef("--reason is %s: shorten it; nothing was recorded", why)
	}
	return nil
}
