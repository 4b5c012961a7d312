package langgraph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"rewind/cli"
)

// TestCLIReadsPostgresAsItsSQLiteTwin: generate-cases.mjs ran the same
// graphs into SqliteSaver and PostgresSaver, so every read command (threads,
// log with --limit/--before paging, show, events, diff, search; text and
// --json, ids given whole and as short prefixes) prints the same on both,
// but for the ids and times each run drew, and what PostgresSaver does not
// store (t-empty's unwritten reducer channels, see pgUnwritten). The
// PostgreSQL tables and row counts are checked after every command
// (cliCaseSources).
func TestCLIReadsPostgresAsItsSQLiteTwin(t *testing.T) {
	t.Parallel()
	srcs := cliCaseSources(t)
	js := func(name string) int {
		return slices.IndexFunc(srcs, func(cs cliCaseSource) bool { return cs.name == name })
	}
	if js("postgres-js") < 0 {
		t.Skip("no PostgreSQL test server")
	}
	sq, pg := twin{t: t, reads: srcs[js("sqlite-js")].reads}, twin{t: t, reads: srcs[js("postgres-js")].reads}
	for _, thread := range []string{"t-delta", "t-func", "t-empty"} {
		sq.log(thread)
		pg.log(thread)
	}
	type command struct {
		args func(tw twin) []string
		// lines: compare the lines as a set (events: a checkpoint's
		// tasks are in task id order, and task ids differ run to run).
		lines bool
		// absent: lines the SQLite twin prints that PostgresSaver has no
		// row for.
		absent []string
	}
	fixed := func(args ...string) func(twin) []string { return func(twin) []string { return args } }
	at := func(thread string, args ...any) func(twin) []string {
		return func(tw twin) []string {
			out := []string{}
			for _, a := range args {
				switch a := a.(type) {
				case int: // the a-th checkpoint of the thread, oldest first
					out = append(out, tw.ids[thread][a])
				case string:
					out = append(out, a)
				}
			}
			return out
		}
	}
	short := func(thread string, i int) func(twin) []string {
		return func(tw twin) []string {
			id := tw.ids[thread][i]
			return []string{"show", thread, id[:13], "--json"}
		}
	}
	cmds := []command{
		{args: fixed("threads")}, {args: fixed("threads", "--json")},
		{args: fixed("log", "t-delta")}, {args: fixed("log", "t-func", "--json")}, {args: fixed("log", "t-empty")},
		{args: at("t-delta", "log", "t-delta", "--limit", "5", "--before", 150)},
		{args: at("t-delta", "log", "t-delta", "--limit", "5", "--before", 150, "--json")},
		{args: fixed("show", "t-delta")}, {args: fixed("show", "t-delta", "--json")},
		{args: at("t-delta", "show", "t-delta", 100)}, {args: at("t-delta", "show", "t-delta", 100, "--json")},
		{args: at("t-delta", "show", "t-delta", 130, "--json")}, {args: short("t-delta", 131)},
		{args: fixed("show", "t-func")}, {args: at("t-func", "show", "t-func", 0, "--json")},
		{args: fixed("show", "t-empty"), absent: []string{"  notes = []"}},
		{args: at("t-delta", "events", "t-delta", 120)}, {args: fixed("events", "t-func"), lines: true},
		{args: fixed("events", "t-empty", "--json")},
		{args: at("t-delta", "diff", "t-delta", 90, 140)}, {args: at("t-delta", "diff", "t-delta", 90, 140, "--json")},
		{args: at("t-func", "diff", "t-func", 0, 1)},
		{args: fixed("search", "t-delta", "reply", "15")}, {args: fixed("search", "t-delta", "reply", "--limit", "3", "--json")},
	}
	// The newest checkpoint of the DeltaChannel conversation was rebuilt
	// from the snapshot at step 200 (the 202nd checkpoint, the input's
	// step is -1) and the writes of the 31 steps since.
	for _, tw := range []twin{sq, pg} {
		want := "  messages: no value (a DeltaChannel: rebuilt from @" + tw.ids["t-delta"][201] + "'s snapshot and the 31 writes since)\n"
		if out := tw.raw("show", "t-delta"); !strings.Contains(out, want) {
			t.Errorf("show t-delta does not say %q:\n%s", want, out)
		}
	}
	for _, c := range cmds {
		a, b := sq.text(c.args(sq)...), pg.text(c.args(pg)...)
		name := strings.Join(c.args(sq), " ")
		if c.args(sq)[0] == "show" && !strings.HasPrefix(b, "{") {
			b = saysNotStored(t, name, a, b)
		}
		for _, l := range c.absent {
			if !strings.Contains(a, l+"\n") {
				t.Errorf("%s on SQLite: no line %q\n%s", name, l, a)
			}
			a = strings.Replace(a, l+"\n", "", 1)
		}
		if strings.HasPrefix(a, "{") || strings.HasPrefix(a, "[") {
			a, b = withoutEmptyQueue(t, a), withoutEmptyQueue(t, b)
		}
		if c.lines {
			a, b = sortedLines(a), sortedLines(b)
		}
		if a != b {
			t.Errorf("%s: SQLite and PostgreSQL differ:\n%s\n---- PostgreSQL ----\n%s", name, a, b)
		}
	}
}

// twin is one of the two databases, read through the CLI.
type twin struct {
	t     *testing.T
	reads cliReads
	ids   map[string][]string // by thread, oldest first
}

func (tw *twin) log(thread string) {
	tw.t.Helper()
	var out struct {
		Checkpoints []struct {
			ID string `json:"id"`
		} `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(tw.raw("log", thread, "--json")), &out); err != nil {
		tw.t.Fatal(err)
	}
	if tw.ids == nil {
		tw.ids = map[string][]string{}
	}
	for _, cp := range out.Checkpoints {
		tw.ids[thread] = append(tw.ids[thread], cp.ID)
	}
}

// text runs a command and gives its output with the ids and times a run
// draws made alike.
func (tw twin) text(args ...string) string {
	tw.t.Helper()
	s := tw.raw(args...)
	for _, r := range drawn {
		s = r.re.ReplaceAllString(s, r.with)
	}
	return s
}

// raw runs a command and gives its output.
func (tw twin) raw(args ...string) string {
	tw.t.Helper()
	var out, stderr bytes.Buffer
	code := cli.Run(context.Background(), append(args, "--store", tw.reads.spec), &out, &stderr)
	if diff := tw.reads.unchanged(); diff != "" {
		tw.t.Fatalf("rewind %s wrote: %s", strings.Join(args, " "), diff)
	}
	if code != cli.ExitOK {
		tw.t.Fatalf("rewind %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	return out.String()
}

// drawn are what differs run to run: checkpoint and task ids (UUIDs, and
// their short forms), interrupt ids, times.
var drawn = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "UUID"},
	{regexp.MustCompile(`[0-9a-f]{8}…[0-9a-f]{4}`), "SHORT"},
	{regexp.MustCompile(`\b[0-9a-f]{32}\b`), "HEX"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)?`), "TIME"},
}

func sortedLines(s string) string {
	l := strings.Split(s, "\n")
	slices.Sort(l)
	return strings.Join(l, "\n")
}

// withoutEmptyQueue drops the internal channel __pregel_tasks where it
// holds [] from a --json output (SqliteSaver stores the empty queue in
// the checkpoint, PostgresSaver no blob for a channel no task wrote, and
// neither's get_state shows it), and sorts a checkpoint's tasks (in task
// id order, and task ids differ run to run).
func withoutEmptyQueue(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "fromFirstWrite") // PostgresSaver's (see above)
			for k, e := range x {
				x[k] = walk(e)
			}
			if chans, ok := x["channels"].([]any); ok {
				x["channels"] = slices.DeleteFunc(chans, func(c any) bool {
					m, _ := c.(map[string]any)
					l, isList := m["value"].([]any)
					return m["name"] == "__pregel_tasks" && isList && len(l) == 0
				})
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
			if m, ok := first(x).(map[string]any); ok && m["task"] != nil {
				slices.SortFunc(x, func(a, b any) int { return strings.Compare(jsonText(a), jsonText(b)) })
			}
		}
		return v
	}
	b, err := json.MarshalIndent(walk(v), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func first(l []any) any {
	if len(l) == 0 {
		return nil
	}
	return l[0]
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// saysNotStored checks that show's text b on PostgreSQL says that
// PostgresSaver stores a channel from its first write on and a, on
// LangGraph.js's SqliteSaver, which stores every value, does not; it
// returns b without it.
func saysNotStored(t *testing.T, name, a, b string) string {
	t.Helper()
	const says = "\nNOT STORED\n  (this saver stores a channel from its first write on: a reducer channel no node has written, which LangGraph shows as its default, [] for a list, is in no row)\n"
	if !strings.Contains(b, says) || strings.Contains(a, says) {
		t.Errorf("%s: PostgreSQL does not say, or SQLite says, %q:\n%s\n---- PostgreSQL ----\n%s", name, says, a, b)
	}
	return strings.Replace(b, says, "", 1)
}
