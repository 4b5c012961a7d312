package langgraph_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	mathbig "math/big"
	"strconv"
	"strings"

	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"rewind/cli"
	"rewind/store/browse"
	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
	"rewind/store/postgres/pgtest"
)

// LangGraph's own answer for the threads of testdata/generate-cases.mjs
// (a DeltaChannel conversation, a functional-API thread, a graph whose
// reducer channels nobody writes) and generate-python-cases.py (a
// functional-API thread, Command(update=…) on an interrupted thread, a
// superstep one of three branches failed): getStateHistory and getState,
// recorded by the generator beside each database.

type lgSnap struct {
	ID     string         `json:"checkpoint_id"`
	Parent *string        `json:"parent_id"`
	Values map[string]any `json:"values"`
	Next   []string       `json:"next"`
	Tasks  []struct {
		ID         string  `json:"id"`
		Name       string  `json:"name"`
		Error      *string `json:"error"`
		Interrupts []any   `json:"interrupts"`
	} `json:"tasks"`
	Source string `json:"source"`
	Step   int    `json:"step"`
	// Metadata (generate-python-cases.py --values, --encrypted): the
	// checkpoint's metadata as get_state_history shows it.
	Metadata map[string]any `json:"metadata"`
}

type lgThread struct {
	State   lgSnap   `json:"state"`
	History []lgSnap `json:"history"`
	// TaskNames (LangGraph Python only): the id and name of every task
	// LangGraph started (stream_mode="tasks"), the functional API's task
	// calls too, which getState lists nowhere.
	TaskNames map[string]string `json:"task_names"`
}

// readAnswers is LangGraph's answers in file name, decoded once for every
// test that asks (they only read them): a few of the files are a megabyte
// of JSON, and under -race each decode cost about a tenth of a second.
func readAnswers(t testing.TB, name string) map[string]lgThread {
	t.Helper()
	answersMu.Lock()
	m := answersMemo[name]
	if m == nil {
		m = &answersRead{}
		answersMemo[name] = m
	}
	answersMu.Unlock()
	m.once.Do(func() { m.threads, m.err = decodeAnswers(name) })
	if m.err != nil {
		t.Fatal(m.err)
	}
	return m.threads
}

type answersRead struct {
	once    sync.Once
	threads map[string]lgThread
	err     error
}

var (
	answersMu   sync.Mutex
	answersMemo = map[string]*answersRead{}
)

func decodeAnswers(name string) (map[string]lgThread, error) {
	file, err := os.Open(filepath.Join(lgtest.Dir(), name))
	if err != nil {
		return nil, err
	}
	defer file.Close()
	z, err := gzip.NewReader(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var f struct {
		Threads map[string]lgThread `json:"threads"`
	}
	if err := json.NewDecoder(z).Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f.Threads, nil
}

// unknowable (by thread): values LangGraph shows that no database row
// names. LangGraph.js's PostgresSaver stores a channel's value only at a
// version, and a reducer channel no node wrote has none: only the graph
// declares it (its default, []). SqliteSaver stores the [] in the
// checkpoint. The checkpoint says so instead (FromFirstWrite; Absent is
// empty: no row of the thread names the channels).
type unknowable map[string][]string

var pgUnwritten = unknowable{"t-empty": {"messages", "notes"}}

// caseSources are the databases generate-cases.mjs wrote, with the file
// of LangGraph's answers for each.
type caseSource struct {
	name, answers string
	open          func(t *testing.T) langgraph.Source
	unknowable    unknowable
	// delta: the database holds t-delta (a DeltaChannel: LangGraph.js's,
	// or LangGraph Python 1.2's; Python 1.1.6 has none).
	delta bool
}

func caseSources() []caseSource {
	return []caseSource{
		{"sqlite-js", "sqlite-js-cases.json.gz", func(t *testing.T) langgraph.Source {
			return open(t, "sqlite:"+lgtest.Copy(t, "sqlite-js-cases.db"))
		}, nil, true},
		{"postgres-js", "postgres-js-cases.json.gz", func(t *testing.T) langgraph.Source {
			return open(t, lgtest.Dump(t, "postgres-js-cases.sql"))
		}, pgUnwritten, true},
		{"sqlite-python", "sqlite-python-cases.json.gz", func(t *testing.T) langgraph.Source {
			return open(t, "sqlite:"+lgtest.Copy(t, "sqlite-python-cases.db"))
		}, nil, false},
		{"sqlite-python-delta", "sqlite-python-delta.json.gz", func(t *testing.T) langgraph.Source {
			return open(t, "sqlite:"+lgtest.Copy(t, "sqlite-python-delta.db"))
		}, nil, true},
		{"sqlite-python-async", "sqlite-python-async.json.gz", func(t *testing.T) langgraph.Source {
			return open(t, "sqlite:"+lgtest.Copy(t, "sqlite-python-async.db"))
		}, nil, false},
		{"sqlite-python-values", "sqlite-python-values.json.gz", func(t *testing.T) langgraph.Source {
			return open(t, "sqlite:"+lgtest.Copy(t, "sqlite-python-values.db"))
		}, nil, false},
		{"postgres-python", "postgres-python-cases.json.gz", func(t *testing.T) langgraph.Source {
			return open(t, lgtest.Dump(t, "postgres-python-cases.sql"))
		}, nil, false},
		{"postgres-python-values", "postgres-python-values.json.gz", func(t *testing.T) langgraph.Source {
			return open(t, lgtest.Dump(t, "postgres-python-values.sql"))
		}, nil, false},
	}
}

// TestStateAsLangGraphShowsIt compares, for every checkpoint of each
// thread, the reader's listing and state with LangGraph's: ids, parents,
// next, and every value (messages by type, id and content).
func TestStateAsLangGraphShowsIt(t *testing.T) {
	t.Parallel()
	for _, cs := range caseSources() {
		t.Run(cs.name, func(t *testing.T) {
			t.Parallel()
			src, answers := readCase(t, cs)
			checks := 0
			for _, thread := range slices.Sorted(mapKeys(answers)) {
				checks += compareThread(t, src, thread, answers[thread], cs.unknowable[thread], every)
				checks += compareTasks(t, src, thread, answers[thread])
			}
			t.Logf("%s: %d checks matched LangGraph's answers", cs.name, checks)
		})
	}
}

// caseReads is what a case database's Source answered for every listing,
// checkpoint (each the listing names or LangGraph lists, and the current)
// and checkpoint's writes of every thread LangGraph answered for: read
// once, for TestStateAsLangGraphShowsIt and
// TestDeltaChannelSaysWhatItWasRebuiltFrom, which ask the same (each
// read rebuilds a DeltaChannel from its snapshot: under -race, half a
// minute of CPU for each test).
type caseReads struct {
	history map[string]result[[]langgraph.Listing]
	cps     map[[2]string]result[langgraph.Checkpoint]
	writes  map[[2]string]result[[]langgraph.TaskWrites]
	lookups lookupReads
}

type result[T any] struct {
	v   T
	err error
}

var caseMemo = map[string]*struct {
	once    sync.Once
	read    bool
	reads   caseReads
	answers map[string]lgThread
}{"sqlite-js": {}, "postgres-js": {}, "sqlite-python": {}, "sqlite-python-delta": {}, "sqlite-python-async": {}, "sqlite-python-values": {}, "postgres-python": {}, "postgres-python-values": {}}

// readCase is cs's reads and answers, read by the first test to ask.
func readCase(t *testing.T, cs caseSource) (caseReads, map[string]lgThread) {
	t.Helper()
	m := caseMemo[cs.name]
	m.once.Do(func() {
		m.answers = readAnswers(t, cs.answers)
		m.reads = readAll(cs.open(t), m.answers)
		m.read = true
	})
	if !m.read {
		cs.open(t) // skips as the first test did, if it skipped
		t.Fatalf("%s: the test that read it first failed before it had", cs.name)
	}
	return m.reads, m.answers
}

func readAll(src langgraph.Source, answers map[string]lgThread) caseReads {
	ctx := context.Background()
	r := caseReads{history: map[string]result[[]langgraph.Listing]{}, cps: map[[2]string]result[langgraph.Checkpoint]{}, writes: map[[2]string]result[[]langgraph.TaskWrites]{}}
	for thread, want := range answers {
		c := langgraph.Chain{Thread: thread}
		hist, err := src.History(ctx, c, "", 0)
		r.history[thread] = result[[]langgraph.Listing]{hist, err}
		ids := []string{""}
		for _, l := range hist {
			ids = append(ids, l.ID)
		}
		for _, w := range want.History {
			ids = append(ids, w.ID)
		}
		for _, id := range ids {
			k := [2]string{thread, id}
			if _, done := r.cps[k]; done {
				continue
			}
			cp, err := src.Checkpoint(ctx, c, id)
			r.cps[k] = result[langgraph.Checkpoint]{cp, err}
			if id != "" {
				ws, err := src.Writes(ctx, c, id)
				r.writes[k] = result[[]langgraph.TaskWrites]{ws, err}
			}
		}
	}
	r.lookups = readLookups(ctx, src)
	return r
}

func (r caseReads) History(_ context.Context, c langgraph.Chain, before string, limit int) ([]langgraph.Listing, error) {
	got, ok := r.history[c.Thread]
	if !ok || before != "" || limit != 0 {
		return nil, fmt.Errorf("the history of %s (before %q, %d) was not read", c.Thread, before, limit)
	}
	return got.v, got.err
}

func (r caseReads) Checkpoint(_ context.Context, c langgraph.Chain, id string) (langgraph.Checkpoint, error) {
	got, ok := r.cps[[2]string{c.Thread, id}]
	if !ok {
		return langgraph.Checkpoint{}, fmt.Errorf("checkpoint %s of %s was not read", id, c.Thread)
	}
	return got.v, got.err
}

func (r caseReads) Writes(_ context.Context, c langgraph.Chain, id string) ([]langgraph.TaskWrites, error) {
	got, ok := r.writes[[2]string{c.Thread, id}]
	if !ok {
		return nil, fmt.Errorf("the writes of checkpoint %s of %s were not read", id, c.Thread)
	}
	return got.v, got.err
}

// compareTasks: each task LangGraph lists at a checkpoint that stored
// writes, or started (TaskNames), is named by the reader as LangGraph
// names it (its node, its task), found by its id.
func compareTasks(t *testing.T, src caseReads, thread string, want lgThread) int {
	t.Helper()
	c := langgraph.Chain{Thread: thread}
	checks := 0
	for _, w := range want.History {
		ws, err := src.Writes(context.Background(), c, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tw := range ws {
			name, ok := want.TaskNames[tw.Task]
			if !ok {
				continue // LangGraph.js's answers name none; the null task is no task
			}
			if tw.Node != name {
				t.Errorf("%s %s: task %s named %q, LangGraph %q", thread, w.ID, tw.Task, tw.Node, name)
			}
			checks++
		}
		for _, task := range w.Tasks {
			at := slices.IndexFunc(ws, func(tw langgraph.TaskWrites) bool { return tw.Task == task.ID })
			if at < 0 {
				continue // a task that has not run stores nothing
			}
			if ws[at].Node != task.Name {
				t.Errorf("%s %s: task %s named %q, LangGraph %q", thread, w.ID, task.ID, ws[at].Node, task.Name)
			}
			if failed := ws[at].Error != ""; failed != (task.Error != nil) {
				t.Errorf("%s %s: task %s error %q, LangGraph %v", thread, w.ID, task.ID, ws[at].Error, task.Error)
			}
			got := []any{}
			for _, in := range ws[at].Interrupts {
				got = append(got, plain(in.Value))
			}
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(task.Interrupts)
			if string(a) != string(b) {
				t.Errorf("%s %s: task %s interrupts %s, LangGraph %s", thread, w.ID, task.ID, a, b)
			}
			checks += 3
		}
	}
	return checks
}

// TestCLIShowsStateAsLangGraphShowsIt: the same comparison through
// `rewind log --json` and `rewind show --json` of every checkpoint, on a
// copy of the SQLite file and on the PostgresSaver dump loaded into a
// database of its own: after every command the file is byte for byte as
// it was, the tables hold the rows they held.
func TestCLIShowsStateAsLangGraphShowsIt(t *testing.T) {
	t.Parallel()
	for _, cs := range cliCaseSources(t) {
		t.Run(cs.name, func(t *testing.T) {
			t.Parallel()
			answers := readAnswers(t, cs.answers)
			checks := 0
			for _, thread := range slices.Sorted(mapKeys(answers)) {
				checks += compareThread(t, cs.reads, thread, answers[thread], cs.unknowable[thread], cs.read)
			}
			t.Logf("%s: %d checks through the CLI matched LangGraph's answers", cs.name, checks)
		})
	}
}

// cliCaseSource is a database generate-cases.mjs wrote, read through the
// CLI, and LangGraph's answers for it.
type cliCaseSource struct {
	name, answers string
	reads         cliReads
	unknowable    unknowable
	// read picks the checkpoints whose state is compared (every listing is).
	read func(i, n int) bool
}

// cliCaseSources are the SQLite files (copied) and, when the test server
// is there, the PostgreSQL dump (loaded), each read through the CLI and
// checked unchanged after every command (PostgreSQL: its tables and their
// row counts after each, their rows too at the end).
func cliCaseSources(t *testing.T) []cliCaseSource {
	out := []cliCaseSource{
		sqliteCLICase(t, "sqlite-js", "sqlite-js-cases.db", "sqlite-js-cases.json.gz"),
		sqliteCLICase(t, "sqlite-python", "sqlite-python-cases.db", "sqlite-python-cases.json.gz"),
		sqliteCLICase(t, "sqlite-python-delta", "sqlite-python-delta.db", "sqlite-python-delta.json.gz"),
		sqliteCLICase(t, "sqlite-python-async", "sqlite-python-async.db", "sqlite-python-async.json.gz"),
		sqliteCLICase(t, "sqlite-python-values", "sqlite-python-values.db", "sqlite-python-values.json.gz"),
	}
	if pgtest.Available(t) {
		out = append(out, postgresCLICase(t, "postgres-js", "postgres-js-cases.sql", "postgres-js-cases.json.gz", pgUnwritten),
			postgresCLICase(t, "postgres-python", "postgres-python-cases.sql", "postgres-python-cases.json.gz", nil),
			postgresCLICase(t, "postgres-python-values", "postgres-python-values.sql", "postgres-python-values.json.gz", nil))
	}
	return out
}

// postgresCLICase loads dump and reads it through the CLI, its tables'
// row counts checked after every command, their rows at the end, on one
// watching session (a session a check was a sixth of the package's).
func postgresCLICase(t *testing.T, name, dump, answers string, u unknowable) cliCaseSource {
	db := lgtest.Dump(t, dump)
	w := lgtest.Watch(t, db)
	tables, counts := w.Tables(t), w.Counts(t)
	t.Cleanup(func() { // before Watch's: cleanups run last first
		if now := w.Tables(t); now != tables {
			t.Errorf("%s: the rows changed: the tables now hold %s; they held %s", name, now, tables)
		}
	})
	return cliCaseSource{name, answers, cliReads{spec: db, unchanged: func() string {
		if now := w.Counts(t); now != counts {
			return "the tables now hold " + now + "; they held " + counts
		}
		return ""
	}}, u, sampled}
}

// sqliteCLICase reads a copy of file through the CLI, checked byte for
// byte unchanged, with nothing left beside it, after every command.
func sqliteCLICase(t *testing.T, name, file, answers string) cliCaseSource {
	path := lgtest.Copy(t, file)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return cliCaseSource{name, answers, cliReads{spec: "sqlite:" + path, unchanged: func() string {
		after, err := os.ReadFile(path)
		switch {
		case err != nil:
			return err.Error()
		case !bytes.Equal(before, after):
			return "the database file changed"
		}
		for _, beside := range []string{"-wal", "-shm", "-journal"} {
			if _, err := os.Stat(path + beside); err == nil {
				return "left " + beside + " beside the database"
			}
		}
		return ""
	}}, nil, every}
}

// cliReads reads through the CLI's --json output (its entry, cli.Run, as
// the rewind binary runs it); unchanged says how the database differs
// from what it was ("" when it does not), asked after every command.
type cliReads struct {
	spec      string
	unchanged func() string
}

func (r cliReads) run(v any, args ...string) error {
	var out, stderr bytes.Buffer
	code := cli.Run(context.Background(), append(args, "--json", "--store", r.spec), &out, &stderr)
	if diff := r.unchanged(); diff != "" {
		return fmt.Errorf("rewind %s wrote: %s", strings.Join(args, " "), diff)
	}
	if code != cli.ExitOK {
		return fmt.Errorf("rewind %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	d := json.NewDecoder(&out)
	d.UseNumber() // integers past 2**53 stay exact
	return d.Decode(v)
}

func (r cliReads) History(_ context.Context, c langgraph.Chain, _ string, _ int) ([]langgraph.Listing, error) {
	var out struct {
		Checkpoints []langgraph.Listing `json:"checkpoints"`
	}
	err := r.run(&out, "log", c.Thread)
	slices.Reverse(out.Checkpoints) // oldest first; a Source's newest first
	return out.Checkpoints, err
}

func (r cliReads) Checkpoint(_ context.Context, c langgraph.Chain, id string) (langgraph.Checkpoint, error) {
	var out struct {
		Checkpoint langgraph.Checkpoint `json:"checkpoint"`
	}
	args := []string{"show", c.Thread}
	if id != "" {
		args = append(args, id)
	}
	err := r.run(&out, args...)
	return out.Checkpoint, err
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// reads is what compareThread reads: a Source, or the CLI.
type reads interface {
	History(ctx context.Context, c langgraph.Chain, before string, limit int) ([]langgraph.Listing, error)
	Checkpoint(ctx context.Context, c langgraph.Chain, id string) (langgraph.Checkpoint, error)
}

// every reads every checkpoint's state.
func every(int, int) bool { return true }

func compareThread(t *testing.T, src reads, thread string, want lgThread, unknown []string, read func(i, n int) bool) int {
	t.Helper()
	ctx := context.Background()
	c := langgraph.Chain{Thread: thread}
	hist, err := src.History(ctx, c, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != len(want.History) {
		t.Fatalf("%s: %d checkpoints, LangGraph lists %d", thread, len(hist), len(want.History))
	}
	checks := 1
	for i, w := range want.History {
		l := hist[i]
		parent := ""
		if w.Parent != nil {
			parent = *w.Parent
		}
		if l.ID != w.ID || l.Parent != parent || l.Step != w.Step || l.Source != w.Source {
			t.Errorf("%s #%d: %s parent %s step %d %s, LangGraph %s parent %s step %d %s", thread, i, l.ID, l.Parent, l.Step, l.Source, w.ID, parent, w.Step, w.Source)
		}
		if got := nodes(l.Next); !slices.Equal(got, sortedCopy(w.Next)) {
			t.Errorf("%s %s: log next %v, LangGraph %v", thread, w.ID, got, w.Next)
		}
		checks += 4
		if !read(i, len(want.History)) {
			continue
		}
		cp, err := src.Checkpoint(ctx, c, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if w.ID == want.State.ID {
			// The reader shows the newest checkpoint as the thread's
			// current state, which get_state (no checkpoint_id) applies
			// finished tasks' writes to; get_state_history does not: its
			// due tasks are the stored ones, one key away.
			if cp.Stored != nil && len(cp.Stored.Next) > 0 && !slices.Equal(nodes(cp.Stored.Next), sortedCopy(w.Next)) {
				t.Errorf("%s %s: stored next %v, LangGraph's history %v", thread, w.ID, nodes(cp.Stored.Next), w.Next)
			}
			w = want.State
		}
		if got := nodes(cp.Next); !slices.Equal(got, sortedCopy(w.Next)) {
			t.Errorf("%s %s: next %v, LangGraph %v", thread, w.ID, got, w.Next)
		}
		checks += 1 + compareValues(t, thread, w, cp, unknown)
	}
	cur, err := src.Checkpoint(ctx, c, "")
	if err != nil {
		t.Fatal(err)
	}
	if cur.ID != want.State.ID || !slices.Equal(nodes(cur.Next), sortedCopy(want.State.Next)) {
		t.Errorf("%s: current %s next %v, LangGraph %s next %v", thread, cur.ID, nodes(cur.Next), want.State.ID, want.State.Next)
	}
	return checks + 2 + compareValues(t, thread, want.State, cur, unknown)
}

// compareValues compares cp's state with LangGraph's values: every
// channel LangGraph shows, and no other. A functional-API thread's state
// is its returned value, in __end__.
func compareValues(t *testing.T, thread string, w lgSnap, cp langgraph.Checkpoint, unknown []string) int {
	t.Helper()
	got := map[string]any{}
	for _, ch := range cp.Channels {
		if !ch.Internal {
			got[ch.Name] = plain(ch.Value)
		}
	}
	want := maps.Clone(w.Values)
	if _, fn := got["__end__"]; fn || thread == "t-func" {
		want = map[string]any{}
		if w.Values != nil {
			want["__end__"] = map[string]any(w.Values)
		}
	}
	if len(unknown) > 0 && !cp.FromFirstWrite {
		t.Errorf("%s %s: %v missing, and the checkpoint does not say its saver stores a channel from its first write on", thread, w.ID, unknown)
	}
	for k, v := range want {
		// A reducer channel no node has written yet: LangGraph shows its
		// default, which a saver that stores a channel from its first
		// write on does not hold; the reader names it absent instead.
		if _, ok := got[k]; !ok && reflect.DeepEqual(v, []any{}) && cp.FromFirstWrite && slices.Contains(cp.Absent, k) {
			delete(want, k)
		}
	}
	for _, k := range unknown {
		if v, ok := want[k]; !ok || !reflect.DeepEqual(v, []any{}) {
			t.Errorf("%s %s: LangGraph shows %s = %v; the test expects [] there", thread, w.ID, k, v)
		}
		if _, ok := got[k]; ok {
			t.Errorf("%s %s: %s shows, but no row names it (unknowable says so: update it)", thread, w.ID, k)
		}
		delete(want, k)
	}
	if strings.Contains(cp.Damaged, `stored as "pickle"`) {
		// JsonPlusSerializer(pickle_fallback=True) pickled the checkpoint
		// (t-pickle): rewind reads no pickle and names it; what it shows
		// must still be LangGraph's.
		for k := range want {
			if _, ok := got[k]; !ok {
				delete(want, k)
			}
		}
	}
	if w.Metadata != nil {
		a, _ := json.Marshal(plain(cp.Metadata))
		b, _ := json.Marshal(w.Metadata)
		if string(a) != string(b) {
			t.Errorf("%s %s: metadata\n%s\nLangGraph\n%s", thread, w.ID, clip(a), clip(b))
		}
	}
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	if string(a) != string(b) {
		t.Errorf("%s %s: state\n%s\nLangGraph\n%s", thread, w.ID, clip(a), clip(b))
		return 0
	}
	return len(want)
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:300]) + " … " + string(b[len(b)-300:])
	}
	return string(b)
}

// plain is a decoded value as the generator records LangGraph's: a
// message as its type, id and content; an integer past a float64's exact
// ones as {"$int": decimal}, NaN and the infinities as {"$float": "NaN" |
// "Infinity" | "-Infinity"} (JSON holds neither exactly).
func plain(v any) any {
	switch x := v.(type) {
	case []any:
		if msgs, ok := browse.Messages(x); ok && len(msgs) > 0 {
			out := make([]any, len(msgs))
			for i, m := range msgs {
				out[i] = map[string]any{"$message": map[string]any{"type": m.Role, "id": m.ID, "content": m.Content}}
			}
			return out
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case map[string]any:
		if f, ok := pyFloats[x[langgraph.KeyValue]]; ok && x[langgraph.KeyType] == "builtins.float" && len(x) == 2 {
			return map[string]any{"$float": f}
		}
		out := map[string]any{}
		for k, e := range x {
			out[k] = plain(e)
		}
		return out
	case int64:
		return exactInt(json.Number(strconv.FormatInt(x, 10)))
	case uint64:
		return exactInt(json.Number(strconv.FormatUint(x, 10)))
	case json.Number:
		return exactInt(x)
	}
	return v
}

var pyFloats = map[any]string{"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}

// exactInt is n as a float64 where that holds it exactly, else (an
// integer past ±2**53) as {"$int": decimal}.
func exactInt(n json.Number) any {
	if i, ok := new(mathbig.Int).SetString(n.String(), 10); ok && i.CmpAbs(mathbig.NewInt(1<<53)) > 0 {
		return map[string]any{"$int": i.String()}
	}
	f, _ := n.Float64()
	return f
}

func nodes(ts []langgraph.Task) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Node)
	}
	slices.Sort(out)
	return out
}

func sortedCopy(s []string) []string {
	out := append([]string{}, s...)
	slices.Sort(out)
	return out
}

// sampled reads the first and last checkpoints of a chain, those around
// each DeltaChannel snapshot (every 100 updates) and every 23rd: a
// command on PostgreSQL connects twice (about half a second on the shared
// test server), and TestStateAsLangGraphShowsIt reads every checkpoint
// through the Source.
func sampled(i, n int) bool {
	return i < 3 || i >= n-3 || i%100 <= 2 || i%100 >= 97 || i%23 == 0
}

// encryptedKey is the LANGGRAPH_AES_KEY generate-python-cases.py
// --encrypted ran with (a test key, in the README).
const encryptedKey = "0123456789abcdef0123456789abcdef"

// TestEncryptedAsLangGraphShowsIt: a thread LangGraph wrote through its
// EncryptedSerializer reads, with LANGGRAPH_AES_KEY, as LangGraph showed
// it (through the Source and the CLI, the file unchanged); without the
// key, every checkpoint says which variable to set. Not parallel: the
// key is the process's environment.
func TestEncryptedAsLangGraphShowsIt(t *testing.T) {
	const db, file = "sqlite-python-encrypted.db", "sqlite-python-encrypted.json.gz"
	answers := readAnswers(t, file)
	t.Setenv(langgraph.EnvAESKey, encryptedKey)
	src := readAll(open(t, "sqlite:"+lgtest.Copy(t, db)), answers)
	cs := sqliteCLICase(t, "sqlite-python-encrypted", db, file)
	checks := 0
	for _, thread := range slices.Sorted(mapKeys(answers)) {
		checks += compareThread(t, src, thread, answers[thread], nil, every)
		checks += compareTasks(t, src, thread, answers[thread])
		checks += compareThread(t, cs.reads, thread, answers[thread], nil, every)
	}
	t.Logf("%d checks matched LangGraph's answers", checks)

	t.Setenv(langgraph.EnvAESKey, "")
	keyless := open(t, "sqlite:"+lgtest.Copy(t, db))
	for thread, want := range answers {
		h, err := keyless.History(context.Background(), langgraph.Chain{Thread: thread}, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != len(want.History) {
			t.Fatalf("%s without the key: %d checkpoints, LangGraph lists %d", thread, len(h), len(want.History))
		}
		for _, l := range h {
			if !strings.Contains(l.Damaged, "set LANGGRAPH_AES_KEY") {
				t.Errorf("%s %s without the key: damage reads %q, want it to name LANGGRAPH_AES_KEY", thread, l.ID, l.Damaged)
			}
		}
	}
}

// TestPickledAsLangGraphShowsIt: t-pickle's values LangGraph pickled
// (pickle_fallback=True: 2**70+1, an instance of a plain class) are named
// as pickled where stored, the checkpoint holding them whole too, and what
// was not pickled reads as LangGraph showed it (the rest of
// TestStateAsLangGraphShowsIt's comparison).
func TestPickledAsLangGraphShowsIt(t *testing.T) {
	t.Parallel()
	i := slices.IndexFunc(caseSources(), func(cs caseSource) bool { return cs.name == "sqlite-python-values" })
	src, answers := readCase(t, caseSources()[i])
	want, c := answers["t-pickle"], langgraph.Chain{Thread: "t-pickle"}
	ctx := context.Background()
	pickled := map[string]string{}
	for _, w := range want.History {
		cp, err := src.Checkpoint(ctx, c, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(cp.Damaged, `stored as "pickle"`) {
			pickled["checkpoint "+w.ID] = cp.Damaged
		}
		ws, err := src.Writes(ctx, c, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, tw := range ws {
			for _, wr := range tw.Writes {
				if m, ok := wr.Value.(map[string]any); ok && m[langgraph.KeyOpaque] == "pickle" {
					pickled["write "+wr.Channel] = wr.Type
				} else if wr.Channel == "note" && wr.Value != "plain" && wr.Value != "start" {
					t.Errorf("%s: note's write reads %v; LangGraph's values say plain", w.ID, wr.Value)
				}
			}
		}
	}
	newest := want.History[0]
	if _, ok := pickled["checkpoint "+newest.ID]; !ok || pickled["write big"] != "pickle" || pickled["write obj"] != "pickle" {
		t.Fatalf("named as pickled: %v; want the newest checkpoint %s and the writes of big and obj (LangGraph: %v)", pickled, newest.ID, newest.Values)
	}
	// The words say why and what reads it: unpickling runs the database's code.
	if d := pickled["checkpoint "+newest.ID]; !strings.Contains(d, "never unpickles") || !strings.Contains(d, "get_state") {
		t.Fatalf("the pickled checkpoint says %q: want why rewind does not read it and what does (LangGraph's get_state)", d)
	}
}
