package cli

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"rewind/store/langgraph/lgtest"
	"rewind/store/postgres/pgtest"
)

// The read commands on LangGraph's databases (store/langgraph/testdata:
// Python and LangGraph.js, SqliteSaver and PostgresSaver), through the
// CLI's entry: what the fixtures' README says is there, and the database
// as it was after every command.
func TestReadCommandsOnLangGraphDatabases(t *testing.T) {
	t.Parallel()
	type db struct {
		name, spec string
		subgraph   bool // Python's review node is a subgraph
		unchanged  func(t *testing.T)
	}
	sqlite := func(name, file string, subgraph bool) db {
		path := lgtest.Copy(t, file)
		before := lgtest.Sum(t, path)
		return db{name, "sqlite:" + path, subgraph, func(t *testing.T) {
			if lgtest.Sum(t, path) != before {
				t.Errorf("%s changed", file)
			}
			for _, beside := range []string{"-wal", "-shm", "-journal"} {
				if _, err := os.Stat(path + beside); err == nil {
					t.Errorf("left %s beside %s", beside, file)
				}
			}
		}}
	}
	dbs := []db{sqlite("python sqlite", "sqlite-python.db", true), sqlite("js sqlite", "sqlite-js.db", false)}
	if pgtest.Available(t) {
		for _, f := range []struct {
			name, dump string
			subgraph   bool
		}{{"python postgres", "postgres-python.sql", true}, {"js postgres", "postgres-js.sql", false}} {
			spec := lgtest.Dump(t, f.dump)
			counts := rowsKept(t, f.name, spec)
			w := lgtest.Watch(t, spec) // one session for the counts after every command
			dbs = append(dbs, db{f.name, spec, f.subgraph, func(t *testing.T) {
				if after := w.Counts(t); after != counts {
					t.Errorf("tables now %s, were %s", after, counts)
				}
			}})
		}
	}
	for _, d := range dbs {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			defer d.unchanged(t)
			read := func(v any, args ...string) string {
				t.Helper()
				code, out, stderr := run(t, append(args, "--store", d.spec)...)
				d.unchanged(t) // after every command, not only the last
				if code != ExitOK {
					t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
				}
				if v != nil {
					if err := json.Unmarshal([]byte(out), v); err != nil {
						t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
					}
				}
				return out
			}

			// threads: both, and Python's subgraph run under t-main,
			// hanging off the checkpoint whose task runs it.
			var threads []struct {
				ID         string `json:"id"`
				Namespaces []struct {
					NS               string `json:"ns"`
					Node             string `json:"node"`
					ParentCheckpoint string `json:"parentCheckpoint"`
				} `json:"namespaces"`
			}
			read(&threads, "threads", "--json")
			var ids []string
			for _, th := range threads {
				ids = append(ids, th.ID)
			}
			if !slices.Contains(ids, "t-main") || !slices.Contains(ids, "t-fail") {
				t.Fatalf("threads %v, want t-main and t-fail", ids)
			}
			// Where each stands, on every saver: t-fail's worker raised,
			// t-main's newest checkpoint waits before review.
			var statuses []struct {
				ID     string `json:"id"`
				Status struct {
					State string `json:"state"`
					Where string `json:"where"`
				} `json:"status"`
			}
			read(&statuses, "threads", "--json")
			for _, th := range statuses {
				if want := map[string]string{"t-fail": "error worker", "t-main": "interrupted before review"}[th.ID]; th.Status.State+" "+th.Status.Where != want {
					t.Errorf("threads --json: %s is %+v, want %s", th.ID, th.Status, want)
				}
			}
			main := threads[slices.Index(ids, "t-main")]
			sub := ""
			if d.subgraph {
				if len(main.Namespaces) != 2 || main.Namespaces[1].Node != "review" || main.Namespaces[1].ParentCheckpoint == "" {
					t.Fatalf("t-main's namespaces %+v, want the root and review's", main.Namespaces)
				}
				sub = main.Namespaces[1].NS
				if out := read(nil, "threads"); !strings.Contains(out, "--ns "+sub) {
					t.Errorf("threads does not list the subgraph %s:\n%s", sub, out)
				}
			}

			// log: the fork points (a checkpoint with two children), the
			// update_state fork, the 3 queued Sends.
			var log struct {
				Checkpoints []lgListing `json:"checkpoints"`
			}
			read(&log, "log", "t-main", "--json")
			children := map[string]int{}
			update, sends := "", ""
			for _, cp := range log.Checkpoints {
				children[cp.Parent]++
				if cp.Source == "update" {
					update = cp.ID
				}
				if len(cp.Next) == 3 && cp.Next[0].Send && cp.Next[0].Node == "worker" {
					sends = cp.ID
				}
			}
			forks := 0
			for p, n := range children {
				if p != "" && n >= 2 {
					forks++
				}
			}
			if forks < 2 || update == "" || sends == "" {
				t.Errorf("log t-main: %d fork point(s), update %q, Sends at %q: want 2 fork points (update_state, a replay), an update, 3 Sends", forks, update, sends)
			}
			latest := log.Checkpoints[len(log.Checkpoints)-1].ID
			checkInputUnwritten(t, d.name, log.Checkpoints[0].ID, read)
			var newest struct {
				Checkpoints []lgListing `json:"checkpoints"`
			}
			if read(&newest, "log", "t-main", "-n", "2", "--json"); len(newest.Checkpoints) != 2 || newest.Checkpoints[1].ID != latest ||
				newest.Checkpoints[0].ID != log.Checkpoints[len(log.Checkpoints)-2].ID {
				t.Errorf("log -n 2: %+v, want the newest two of %d", newest.Checkpoints, len(log.Checkpoints))
			}
			// --before ID --limit N pages back as LangGraph's
			// list(before=…, limit=…): the pages, each --before the
			// oldest of the last, are the whole chain, newest first, and
			// the text says how to ask for the next.
			var pages []lgListing
			before := ""
			for range len(log.Checkpoints) + 1 {
				var page struct {
					Checkpoints []lgListing `json:"checkpoints"`
				}
				args := []string{"log", "t-main", "--limit", "3", "--json"}
				if before != "" {
					args = append(args, "--before", before)
				}
				if read(&page, args...); len(page.Checkpoints) == 0 {
					break
				}
				if len(page.Checkpoints) > 3 {
					t.Fatalf("a page of %d", len(page.Checkpoints))
				}
				pages = append(page.Checkpoints, pages...)
				before = page.Checkpoints[0].ID
			}
			if len(pages) != len(log.Checkpoints) || pages[0].ID != log.Checkpoints[0].ID || pages[len(pages)-1].ID != latest {
				t.Errorf("the pages hold %d checkpoints, the log %d", len(pages), len(log.Checkpoints))
			}
			if out := read(nil, "log", "t-main", "--limit", "3"); !strings.Contains(out, "--before ") || !strings.Contains(out, "--limit 3") {
				t.Errorf("log --limit 3 does not say how to page back:\n%s", out)
			}
			if out := read(nil, "log", "t-main"); !strings.Contains(out, "worker (Send) ×3") {
				t.Errorf("log t-main does not show the 3 Sends:\n%s", out)
			}
			// search: LangGraph keeps no index; each branch's newest
			// checkpoint is scanned, a message the branches share listed
			// once, on the newest (the head's).
			var hits struct {
				Hits []struct {
					Index      int    `json:"index"`
					Role       string `json:"role"`
					Checkpoint string `json:"checkpoint"`
					Head       bool   `json:"head"`
				} `json:"hits"`
				More bool `json:"more"`
			}
			read(&hits, "search", "t-main", "tables", "--json")
			if len(hits.Hits) != 3 || hits.Hits[0].Role != "human" || hits.Hits[2].Role != "tool" || hits.Hits[0].Index != 1 ||
				!hits.Hits[0].Head || hits.Hits[0].Checkpoint != latest || hits.More {
				t.Errorf("search t-main tables: %+v, want the question, the call and its result, at @%s", hits, latest)
			}
			if read(&hits, "search", "t-main", "tables", "--limit", "1", "--json"); len(hits.Hits) != 1 || !hits.More {
				t.Errorf("search --limit 1: %+v, want one hit and more", hits)
			}
			if out := read(nil, "search", "t-main", "langgraph", "tab"); !strings.Contains(out, "1 message holds") || !strings.Contains(out, "#1     human: research [langgraph] [tables]") {
				t.Errorf("search t-main for two words:\n%s", out)
			}
			if sub != "" {
				var subLog struct {
					NS          string            `json:"ns"`
					Checkpoints []json.RawMessage `json:"checkpoints"`
				}
				read(&subLog, "log", "t-main", "--ns", sub, "--json")
				if subLog.NS != sub || len(subLog.Checkpoints) != 3 {
					t.Errorf("the subgraph's log: %s with %d checkpoints, want 3", subLog.NS, len(subLog.Checkpoints))
				}
			}

			// show: the tool call joined to its result, and the Sends'
			// arguments.
			var show struct {
				Checkpoint struct {
					ID   string `json:"id"`
					Next []struct {
						Send bool           `json:"send"`
						Arg  map[string]any `json:"arg"`
					} `json:"next"`
				} `json:"checkpoint"`
				Messages []struct {
					Role       string `json:"role"`
					ToolCallID string `json:"toolCallId"`
					ToolCalls  []struct {
						ID     string `json:"id"`
						Name   string `json:"name"`
						Result int    `json:"result"`
					} `json:"toolCalls"`
				} `json:"messages"`
			}
			read(&show, "show", "t-main", latest, "--json")
			joined := false
			for _, m := range show.Messages {
				for _, c := range m.ToolCalls {
					if c.ID == "call_1" && c.Name == "search" && c.Result >= 0 && c.Result < len(show.Messages) && show.Messages[c.Result].ToolCallID == "call_1" {
						joined = true
					}
				}
			}
			if !joined {
				t.Errorf("show t-main %s: messages %+v, want search call_1 joined to its tool message", latest, show.Messages)
			}
			if out := read(nil, "show", "t-main", latest); !strings.Contains(out, "tool call call_1 search(") || !strings.Contains(out, "← call call_1 of #") {
				t.Errorf("show does not draw the tool call joined to its result:\n%s", out)
			}
			// The browser's short form of the id reads the same (on every
			// saver: PostgreSQL's ids are listed by the reader's IDs).
			read(&show, "show", "t-main", "@"+sends[:8]+"…"+sends[len(sends)-4:], "--json")
			if show.Checkpoint.ID != sends {
				t.Errorf("show t-main @%s…%s: checkpoint %s, want %s", sends[:8], sends[len(sends)-4:], show.Checkpoint.ID, sends)
			}
			read(&show, "show", "t-main", "@"+sends, "--json")
			if len(show.Checkpoint.Next) != 3 || !show.Checkpoint.Next[2].Send || show.Checkpoint.Next[2].Arg["part"] != float64(2) {
				t.Errorf("show t-main %s: next %+v, want 3 Sends, the last with part 2", sends, show.Checkpoint.Next)
			}
			if out := read(nil, "show", "t-main", "--message", "1"); !strings.Contains(out, "#1 human:") {
				t.Errorf("show --message 1: %s", out)
			}

			// events: t-fail's error write, with its text.
			var events []struct {
				Checkpoint string `json:"checkpoint"`
				Tasks      []struct {
					Error  string `json:"error"`
					Writes []struct {
						Kind string `json:"kind"`
					} `json:"writes"`
				} `json:"tasks"`
			}
			read(&events, "events", "t-fail", "--json")
			failed := 0
			for _, g := range events {
				for _, tw := range g.Tasks {
					if strings.Contains(tw.Error, "exploded") && len(tw.Writes) == 1 && tw.Writes[0].Kind == "error" {
						failed++
					}
				}
			}
			if failed != 1 {
				t.Errorf("events t-fail: %d failed task(s), want worker 1's error write: %+v", failed, events)
			}
			if out := read(nil, "events", "t-fail"); !strings.Contains(out, "[error]") || !strings.Contains(out, "error: ") {
				t.Errorf("events t-fail does not name the error write:\n%s", out)
			}

			// show t-fail: LangGraph's get_state, the finished workers'
			// findings applied and out of next; what was stored beside.
			var failShow struct {
				Checkpoint struct {
					Channels []struct {
						Name  string `json:"name"`
						Value any    `json:"value"`
					} `json:"channels"`
					Next   []struct{ Node string } `json:"next"`
					Stored struct {
						Channels []struct{ Name string } `json:"channels"`
						Next     []struct{ Node string } `json:"next"`
					} `json:"stored"`
				} `json:"checkpoint"`
			}
			read(&failShow, "show", "t-fail", "--json")
			fcp := failShow.Checkpoint
			findings := ""
			for _, ch := range fcp.Channels {
				if ch.Name == "findings" {
					findings = fmt.Sprint(ch.Value)
				}
			}
			if findings != "[boom#part0 boom#part2]" || len(fcp.Next) != 1 || len(fcp.Stored.Next) != 3 || len(fcp.Stored.Channels) != 1 {
				t.Errorf("show t-fail --json: findings %s, next %+v, stored %+v: want the finished workers' findings applied, the failed one next, the 3 stored Sends beside", findings, fcp.Next, fcp.Stored)
			}
			if out := read(nil, "show", "t-fail"); !strings.Contains(out, "STORED (the state and next apply the pending writes") || !strings.Contains(out, "next: worker, worker, worker") ||
				!strings.Contains(out, `findings = ["boom#part0","boom#part2"]`) {
				t.Errorf("show t-fail does not show the applied state beside the stored one:\n%s", out)
			}

			// diff: the update_state fork against its sibling on the main
			// branch; messages matched by id.
			sibling := ""
			for _, cp := range log.Checkpoints {
				if cp.ID != update && children[cp.Parent] >= 2 && cp.Parent == parentOf(log.Checkpoints, update) {
					sibling = cp.ID
				}
			}
			var diff struct {
				Relation string `json:"relation"`
				Channels []struct {
					Channel string   `json:"channel"`
					Lines   []string `json:"lines"`
				} `json:"channels"`
			}
			read(&diff, "diff", "t-main", sibling, update, "--json")
			found := false
			for _, c := range diff.Channels {
				found = found || c.Channel == "findings" && slices.ContainsFunc(c.Lines, func(l string) bool { return strings.Contains(l, "forked-note") })
			}
			if !strings.HasPrefix(diff.Relation, "different branches, parting after @") || !found {
				t.Errorf("diff %s %s: %+v, want different branches and findings + forked-note", sibling, update, diff)
			}

			// What is not there fails on one line, exit 1; --message out of
			// range too; a writing command is refused (exit 2).
			for _, args := range [][]string{
				{"log", "nope"}, {"show", "t-main", "not-a-checkpoint"}, {"events", "t-main", "not-a-checkpoint"},
				{"diff", "t-main", latest, "not-a-checkpoint"}, {"log", "t-main", "--ns", "review:nope"},
				{"show", "t-main", "--message", "999"},
			} {
				code, _, stderr := run(t, append(args, "--store", d.spec)...)
				if code != ExitFail || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "not found") {
					t.Errorf("%s: exit %d, %q: want exit 1 and one line saying not found", strings.Join(args, " "), code, stderr)
				}
			}
			code, _, stderr := run(t, "fork", "t-main", "1", "--input", "x", "--store", d.spec)
			if code != ExitUsage || !strings.Contains(stderr, "is a LangGraph database") {
				t.Errorf("fork on a LangGraph database: exit %d, %s", code, stderr)
			}
		})
	}
}

// --ns is for a LangGraph database: a rewind store refuses it.
func TestNSRefusedOnARewindStore(t *testing.T) {
	db := "sqlite:" + t.TempDir() + "/r.db"
	code, _, stderr := run(t, "log", "t", "--ns", "review:1", "--store", db)
	if code != ExitUsage || !strings.Contains(stderr, "a rewind thread has one chain") {
		t.Errorf("log --ns on a rewind store: exit %d, %s", code, stderr)
	}
}

// lgListing is a row of `log --json` on a LangGraph database.
type lgListing struct {
	ID     string `json:"id"`
	Parent string `json:"parent"`
	Source string `json:"source"`
	Next   []struct {
		Node string `json:"node"`
		Send bool   `json:"send"`
	} `json:"next"`
}

func parentOf(cps []lgListing, id string) string {
	for _, cp := range cps {
		if cp.ID == id {
			return cp.Parent
		}
	}
	return ""
}

// A LangGraph thread id is stored text: escapes, bidi overrides and line
// breaks in it reach no terminal through threads, log or their errors.
func TestLangGraphIDsThroughTheSanitizer(t *testing.T) {
	path := lgtest.Copy(t, "sqlite-python.db")
	evil := "t-\x1b]52;c;aGk=\x07\u202eevil\nrow"
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"checkpoints", "writes"} {
		if _, err := db.Exec("UPDATE "+table+" SET thread_id = ? WHERE thread_id = 't-fail'", evil); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	for _, args := range [][]string{{"threads"}, {"threads", "--json"}, {"log", evil}, {"events", evil}, {"show", evil}, {"log", evil + "x"}} {
		_, out, stderr := run(t, append(args, "--store", "sqlite:"+path)...)
		for _, bad := range []string{"\x1b", "\x07", "\u202e"} {
			if strings.Contains(out+stderr, bad) {
				t.Errorf("%q prints %q raw:\n%s%s", args, bad, out, stderr)
			}
		}
	}
	if _, out, _ := run(t, "threads", "--store", "sqlite:"+path); !strings.Contains(out, `"t-\x1b]52;c;aGk=\a\u202eevil\nrow"`) {
		t.Errorf("threads does not show the id quoted and escaped:\n%s", out)
	}
}

// checkInputUnwritten: at the input checkpoint id, PostgresSaver and
// Python's SqliteSaver store a channel from its first write on, so the
// reducers LangGraph shows as [] there (findings, messages) are in no
// row: show names them under NOT STORED, show --json in absent;
// LangGraph.js's SqliteSaver (name "js sqlite") stores the [] and show
// prints it.
func checkInputUnwritten(t *testing.T, name, id string, read func(v any, args ...string) string) {
	t.Helper()
	type channel struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
	}
	var input struct {
		Checkpoint struct {
			Absent   []string  `json:"absent"`
			Channels []channel `json:"channels"`
		} `json:"checkpoint"`
	}
	read(&input, "show", "t-main", id, "--json")
	text := read(nil, "show", "t-main", id)
	cp := input.Checkpoint
	at := slices.IndexFunc(cp.Channels, func(c channel) bool { return c.Name == "findings" })
	if name == "js sqlite" {
		if at < 0 || fmt.Sprint(cp.Channels[at].Value) != "[]" || cp.Absent != nil || strings.Contains(text, "NOT STORED") {
			t.Errorf("show t-main %s: channels %+v, absent %v: want findings = [] as stored\n%s", id, cp.Channels, cp.Absent, text)
		}
		return
	}
	if at >= 0 || !slices.Contains(cp.Absent, "findings") || !slices.Contains(cp.Absent, "messages") ||
		!strings.Contains(text, "\nNOT STORED\n  ") || !strings.Contains(text, "findings, messages") || !strings.Contains(text, ": no value here (") {
		t.Errorf("show t-main %s: absent %v, findings at %d: want findings and messages named as not stored:\n%s", id, cp.Absent, at, text)
	}
}

// rowsKept checks, when t ends, that database spec (named name) holds
// the rows it holds now, and returns its tables' row counts (cheap to
// compare after every command).
func rowsKept(t *testing.T, name, spec string) string {
	before := lgtest.Tables(t, spec)
	t.Cleanup(func() {
		if after := lgtest.Tables(t, spec); after != before {
			t.Errorf("%s: the rows changed: the tables now hold %s; they held %s", name, after, before)
		}
	})
	return lgtest.Counts(t, spec)
}
