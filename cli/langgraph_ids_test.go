package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"rewind/store/browse"
	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// The ids a LangGraph database's listings show can be given back: a
// checkpoint by a unique prefix or by the browser's short form (first 8
// and last 4 characters), a subgraph's namespace by the browser's form,
// in every read command, reading what the full id reads; a prefix that
// several start with is refused (exit 2) naming them; one none starts
// with is not found, naming the command that lists them.
func TestLangGraphShortIDs(t *testing.T) {
	t.Parallel()
	spec := "sqlite:" + lgtest.Copy(t, "sqlite-python.db")
	read := func(args ...string) string {
		t.Helper()
		code, out, stderr := run(t, append(args, "--store", spec)...)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		return out
	}
	var log struct {
		Checkpoints []lgListing `json:"checkpoints"`
	}
	if err := json.Unmarshal([]byte(read("log", "t-main", "--json")), &log); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, cp := range log.Checkpoints {
		ids = append(ids, cp.ID)
	}
	// unique is the shortest prefix of id no other id starts with.
	unique := func(id string) string {
		for n := 1; n <= len(id); n++ {
			if !slices.ContainsFunc(ids, func(o string) bool { return o != id && strings.HasPrefix(o, id[:n]) }) {
				return id[:n]
			}
		}
		return id
	}
	tui := func(id string) string { return id[:8] + "…" + id[len(id)-4:] } // tui.lgShortID
	a, b := ids[3], ids[len(ids)-1]
	if p := unique(a); len(p) >= len(a)-4 {
		t.Fatalf("the fixture's %s has no short unique prefix (%s)", a, p)
	}
	for _, form := range []func(string) string{unique, tui, func(id string) string { return "@" + tui(id) }} {
		for _, args := range [][]string{
			{"show", "t-main", "%a"}, {"show", "t-main", "%a", "--message", "1"}, {"events", "t-main", "%a"},
			{"diff", "t-main", "%a", "%b"}, {"log", "t-main", "--before", "%b", "--limit", "2"},
		} {
			full := make([]string, len(args))
			short := make([]string, len(args))
			for i, arg := range args {
				full[i], short[i] = strings.NewReplacer("%a", a, "%b", b).Replace(arg), strings.NewReplacer("%a", form(a), "%b", form(b)).Replace(arg)
			}
			if got, want := read(append(short, "--json")...), read(append(full, "--json")...); got != want {
				t.Errorf("%s reads\n%s\nwant what %s reads:\n%s", strings.Join(short, " "), got, strings.Join(full, " "), want)
			}
			// Full values stay in --json (a message and a page before one
			// do not name the checkpoint given).
			if named := len(args) == 3 || args[0] == "diff"; !named {
				continue
			}
			if out := read(append(short, "--json")...); !strings.Contains(out, `"`+a+`"`) && !strings.Contains(out, `"`+b+`"`) {
				t.Errorf("%s --json names neither %s nor %s whole:\n%s", strings.Join(short, " "), a, b, out)
			}
		}
	}

	// The namespace as the browser's threads list shows it, and a prefix.
	var threads []struct {
		ID         string `json:"id"`
		Namespaces []struct {
			NS   string `json:"ns"`
			Task string `json:"task"`
		} `json:"namespaces"`
	}
	if err := json.Unmarshal([]byte(read("threads", "--json")), &threads); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(threads, func(th struct {
		ID         string `json:"id"`
		Namespaces []struct {
			NS   string `json:"ns"`
			Task string `json:"task"`
		} `json:"namespaces"`
	}) bool {
		return th.ID == "t-main"
	})
	if i < 0 || len(threads[i].Namespaces) != 2 {
		t.Fatalf("threads --json: %+v, want t-main with its review subgraph", threads)
	}
	sub := threads[i].Namespaces[1]
	want := read("log", "t-main", "--ns", sub.NS, "--json")
	for _, ns := range []string{"review:" + tui(sub.Task), "review:" + sub.Task[:6], "rev"} {
		if got := read("log", "t-main", "--ns", ns, "--json"); got != want {
			t.Errorf("log --ns %s reads\n%s\nwant what --ns %s reads", ns, got, sub.NS)
		}
	}

	// Ambiguous: the prefix every checkpoint of the thread shares.
	common := ids[0]
	for _, id := range ids[1:] {
		for !strings.HasPrefix(id, common) {
			common = common[:len(common)-1]
		}
	}
	if common == "" {
		t.Fatalf("the fixture's checkpoints share no prefix: %v", ids)
	}
	slices.Sort(ids)
	for _, args := range [][]string{{"show", "t-main", common}, {"events", "t-main", common}, {"diff", "t-main", common, ids[0]}, {"log", "t-main", "--before", common}, {"show", "t-main", common, "--message", "1"}} {
		code, out, stderr := run(t, append(args, "--store", spec)...)
		line := strings.TrimSpace(stderr)
		if code != ExitUsage || out != "" || strings.Contains(line, "\n") || !strings.HasPrefix(line, "rewind: ambiguous: "+common+" matches "+ids[0]+", "+ids[1]+", ") ||
			!strings.HasSuffix(line, "(give more characters)") && !strings.Contains(line, "; give more characters)") {
			t.Errorf("%s: exit %d, %q: want exit 2 and one line: ambiguous: %s matches %s, %s, … (give more characters)", strings.Join(args, " "), code, stderr, common, ids[0], ids[1])
		}
	}

	// Unknown: not found, naming the command that lists them.
	for _, args := range [][]string{{"show", "t-main", "zz9"}, {"diff", "t-main", a, "zz9"}, {"log", "t-main", "--before", "zz9"}, {"events", "t-main", "@zz9"}} {
		code, _, stderr := run(t, append(args, "--store", spec)...)
		if line := strings.TrimSpace(stderr); code != ExitFail || strings.Contains(line, "\n") || !strings.Contains(line, "checkpoint zz9 not found in thread") || !strings.HasSuffix(line, "list them with `rewind log t-main`") {
			t.Errorf("%s: exit %d, %q: want exit 1, one line: not found … list them with `rewind log t-main`", strings.Join(args, " "), code, stderr)
		}
	}
	code, _, stderr := run(t, "log", "t-main", "--ns", "review:zz9", "--store", spec)
	if code != ExitFail || !strings.Contains(stderr, "namespace review:zz9 not found") || !strings.Contains(stderr, "rewind threads") {
		t.Errorf("log --ns review:zz9: exit %d, %s", code, stderr)
	}

	// A thread by a unique prefix reads as by its id; a prefix two
	// threads share is ambiguous (exit 2), one none has not found.
	if got := read("log", "t-ma", "--json"); got != read("log", "t-main", "--json") {
		t.Errorf("log t-ma: %s, want t-main's", got)
	}
	code, _, stderr = run(t, "show", "t-", "--store", spec)
	if code != ExitUsage || !strings.Contains(stderr, "ambiguous: t- matches t-fail, t-main") {
		t.Errorf("show t-: exit %d, %s: want exit 2, ambiguous", code, stderr)
	}
	code, _, stderr = run(t, "events", "zz", "--store", spec)
	if code != ExitFail || !strings.Contains(stderr, "thread zz not found") {
		t.Errorf("events zz: exit %d, %s: want exit 1, not found", code, stderr)
	}
}

// A thread id or namespace past 64 bytes is printed cut with … after a
// prefix no other starts with: what `rewind threads` prints is what `rewind
// log` takes back.
func TestLangGraphLongIDsCopyBack(t *testing.T) {
	path := lgtest.Copy(t, "sqlite-python.db")
	long := strings.Repeat("0123456789", 10)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"checkpoints", "writes"} {
		if _, err := db.Exec("UPDATE "+table+" SET thread_id = ? WHERE thread_id = 't-main'", "customer-a-"+long); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("UPDATE "+table+" SET thread_id = ? WHERE thread_id = 't-fail'", "customer-b-"+long); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	spec := "sqlite:" + path
	code, out, stderr := run(t, "threads", "--store", spec)
	if code != ExitOK {
		t.Fatalf("threads: exit %d: %s", code, stderr)
	}
	printed := regexp.MustCompile(`(?m)^customer-\S*…`).FindAllString(out, -1)
	slices.Sort(printed)
	if printed = slices.Compact(printed); len(printed) != 2 {
		t.Fatalf("threads prints %q, want both long ids cut, each apart:\n%s", printed, out)
	}
	for _, id := range printed {
		code, out, stderr := run(t, "log", id, "--json", "--store", spec)
		var log struct {
			Thread string `json:"thread"`
		}
		if code != ExitOK || json.Unmarshal([]byte(out), &log) != nil || !strings.HasPrefix(log.Thread, strings.TrimSuffix(id, "…")) || len(log.Thread) != len("customer-a-")+len(long) {
			t.Errorf("log %s: exit %d, thread %q, %s: want the long id it was cut from", id, code, log.Thread, stderr)
		}
	}
	// The note under the table names the failed thread as it printed it.
	see := regexp.MustCompile(`\(rewind (events customer-b-\S+ \S+)\)`).FindStringSubmatch(out)
	if see == nil {
		t.Fatalf("threads has no note naming the failed thread's events:\n%s", out)
	}
	if code, out, stderr := run(t, append(strings.Fields(see[1]), "--store", spec)...); code != ExitOK || !strings.Contains(out, "error: ") {
		t.Errorf("rewind %s: exit %d, %s%s: want its error write", see[1], code, out, stderr)
	}
}

// rewind threads says where each thread stands, as LangGraph's get_state
// does (t-fail: a worker raised; t-main: its newest checkpoint waits
// before review), counts the root chain's checkpoints as the browser
// does, and the command its note prints reads the error whole.
func TestLangGraphThreadStatus(t *testing.T) {
	for _, f := range []struct{ file, errText string }{{"sqlite-python.db", "RuntimeError('worker 1 exploded')"}, {"sqlite-js.db", "worker 1 exploded"}} {
		t.Run(f.file, func(t *testing.T) {
			spec := "sqlite:" + lgtest.Copy(t, f.file)
			code, out, stderr := run(t, "threads", "--store", spec)
			if code != ExitOK {
				t.Fatalf("threads: exit %d: %s", code, stderr)
			}
			var logOut struct {
				Checkpoints []json.RawMessage `json:"checkpoints"`
			}
			_, lj, _ := run(t, "log", "t-main", "--json", "--store", spec)
			if err := json.Unmarshal([]byte(lj), &logOut); err != nil {
				t.Fatal(err)
			}
			rows := map[string][]string{}
			var note string
			for _, line := range strings.Split(out, "\n") {
				if fs := strings.Fields(line); len(fs) > 0 && (fs[0] == "t-main" || fs[0] == "t-fail") {
					rows[fs[0]] = fs
				}
				if strings.HasPrefix(line, "t-fail: worker: ") {
					note = line
				}
			}
			if m := strings.Join(rows["t-main"], " "); !strings.HasPrefix(m, "t-main interrupted before review "+itoa(len(logOut.Checkpoints))+" ") {
				t.Errorf("t-main's row %q: want interrupted before review, %d checkpoints (log t-main's)\n%s", m, len(logOut.Checkpoints), out)
			}
			if m := strings.Join(rows["t-fail"], " "); !strings.HasPrefix(m, "t-fail error at worker ") {
				t.Errorf("t-fail's row %q: want error at worker\n%s", m, out)
			}
			see := regexp.MustCompile(`\(rewind (events t-fail \S+)\)$`).FindStringSubmatch(note)
			if !strings.Contains(note, f.errText) || see == nil {
				t.Fatalf("the note %q: want the error %s and the command that reads it\n%s", note, f.errText, out)
			}
			if code, out, stderr := run(t, append(strings.Fields(see[1]), "--store", spec)...); code != ExitOK || !strings.Contains(out, "error: ") {
				t.Errorf("rewind %s: exit %d, %s%s: want the error write", see[1], code, out, stderr)
			}
			var js []struct {
				ID     string `json:"id"`
				Status struct {
					State, Where, Error, Checkpoint string
				} `json:"status"`
			}
			_, jout, _ := run(t, "threads", "--json", "--store", spec)
			if err := json.Unmarshal([]byte(jout), &js); err != nil {
				t.Fatal(err)
			}
			for _, th := range js {
				want := map[string]string{"t-main": "interrupted", "t-fail": "error"}[th.ID]
				if th.Status.State != want || th.Status.Checkpoint == "" || (want == "error") != (th.Status.Error != "") {
					t.Errorf("threads --json: %s's status %+v, want %s with its checkpoint", th.ID, th.Status, want)
				}
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// failingWrites is a source whose writes do not read.
type failingWrites struct{ browse.Source }

func (failingWrites) Writes(context.Context, browse.Chain, string) ([]browse.TaskWrites, error) {
	return nil, errors.New("disk I/O error")
}

// A thread whose status does not read is still listed, its status
// "unread" and a note saying why: `rewind threads` lists as it did before
// it read statuses.
func TestLangGraphThreadsListAThreadWhoseStatusDoesNotRead(t *testing.T) {
	ctx := context.Background()
	src, err := langgraph.Open(ctx, "sqlite:"+lgtest.Copy(t, "sqlite-python.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out strings.Builder
	if err := lgThreads(ctx, failingWrites{src}, threadsArgs{}, &out); err != nil {
		t.Fatalf("threads: %v", err)
	}
	for _, want := range []string{"t-main", "unread", "t-fail", "t-fail: its status does not read: disk I/O error (rewind log t-fail shows its checkpoints)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("threads does not say %q:\n%s", want, out.String())
		}
	}
}
