package cli_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"rewind/cli"
	"rewind/store/langgraph/lgtest"
	"rewind/store/postgres/pgtest"
)

// password is in every URL with a password below: it must never be printed.
const password = "S3cret-hunter2"

// form is how a command is given a thread and a checkpoint; nil args:
// the command takes neither, only a store.
type form struct {
	args       func(thread, checkpoint string) []string
	checkpoint bool // the command takes a checkpoint
	creates    bool // a new thread is no error: it is created
}

func thread(rest ...string) func(string, string) []string {
	return func(th, _ string) []string { return append([]string{th}, rest...) }
}

func threadAt(rest ...string) func(string, string) []string {
	return func(th, cp string) []string { return append([]string{th, cp}, rest...) }
}

// storeForms are the commands that open a store. A new command must be
// added here (or to noStore), so that it is run with every bad input.
var storeForms = map[string]form{
	// An unknown thread is refused before the screen opens.
	"":               {args: func(th, _ string) []string { return []string{"--thread", th} }},
	"tui":            {args: thread()},
	"selftest":       {},
	"threads":        {},
	"bench":          {args: nil},
	"drill":          {},
	"run":            {args: func(th, _ string) []string { return []string{"--thread", th, "--input", "hi"} }, creates: true},
	"resume":         {args: threadAt(), checkpoint: true},
	"fork":           {args: threadAt("--input", "hi"), checkpoint: true},
	"replay":         {args: threadAt(), checkpoint: true},
	"edit":           {args: threadAt("reviewRounds", "--value", "1"), checkpoint: true},
	"approve":        {args: thread()},
	"reject":         {args: thread("--reason", "no")},
	"discard":        {args: thread()},
	"log":            {args: thread()},
	"show":           {args: threadAt(), checkpoint: true},
	"events":         {args: threadAt(), checkpoint: true},
	"runs":           {args: thread()},
	"stats":          {args: thread()},
	"search":         {args: thread("parcel")},
	"diff":           {args: func(th, cp string) []string { return []string{th, "1", cp} }, checkpoint: true},
	"cancel":         {args: thread()},
	"check fidelity": {args: threadAt(), checkpoint: true},
	// A lesson makes its own threads: no thread is given.
	"demo": {args: func(string, string) []string { return []string{"fork"} }, creates: true},
	// Versions of the mock's records, kept beside the store: no thread.
	"source":          {},
	"source bump":     {args: func(string, string) []string { return []string{"shipments/SO20260901"} }, creates: true},
	"source withdraw": {args: func(string, string) []string { return []string{"shipments/SO20260901"} }, creates: true},
	"source restore":  {args: func(string, string) []string { return []string{"shipments/SO20260901"} }, creates: true},
	// Tenants are the store's: no thread.
	"tenant list": {},
	"tenant add":  {args: func(string, string) []string { return []string{"acme"} }, creates: true},
	"rm":          {args: thread()},
	"rekey":       {args: thread()},
	"prune":       {args: thread("--keep-last", "1")},
}

// noStore are the commands that open no store, with a bad input each.
var noStore = map[string][]string{
	"help":                  {"help", "frobnicate"},
	"check":                 {"check", "--frob"},
	"demo lesson":           {"demo", "no-such-lesson"},
	"completion":            {"completion", "tcsh"},
	"completion bash":       {"completion", "bash", "--frob"},
	"completion fish":       {"completion", "fish", "--frob"},
	"completion powershell": {"completion", "powershell", "--frob"},
	"completion zsh":        {"completion", "zsh", "--frob"},
	"man":                   nil, // given a file for DIR below
	"worker":                {"worker", "frobnicate"},
	"tenant":                {"tenant", "frobnicate"},
}

func init() {
	for _, op := range []string{"run", "resume", "fork", "replay", "approve", "reject"} {
		storeForms["worker "+op] = storeForms[op]
	}
}

// Every command, given each bad input (an unknown thread or checkpoint, a
// 64 KB one, a bad store spec, an empty --store, PostgreSQL URLs that cannot connect,
// with a wrong password and without sslmode, a corrupt sqlite file, a file
// that is not a database, a database that is not rewind's, a store with a
// newer schema), fails with one
// line on stderr and a non-zero exit, never panics, never prints a
// password, and leaves the files it was given as they were. The set-up
// runs the built binary; the bad inputs run through cli.Run, as main runs
// them, in a few batch children of this test binary (inBatches), with
// -race on.
func TestEveryCommandFailsOnOneLine(t *testing.T) {
	t.Parallel()
	for _, p := range cli.CommandPaths() {
		_, s := storeForms[p]
		_, n := noStore[p]
		if !s && !n {
			t.Errorf("command %q is in neither storeForms nor noStore: add it, so that it is run with every bad input", p)
		}
	}
	dir := t.TempDir()
	good := "sqlite:" + filepath.Join(dir, "good.db")
	fallback := filepath.Join(dir, "fallback.db")
	env := []string{"REWIND_STORE=sqlite:" + fallback}
	setup := func(spec string) {
		if r := rewind(t, env, "run", "--store", spec, "--thread", "t", "--input", "Where is my parcel SO20260901?", "--interrupt-before", "executor"); r.code != 0 {
			t.Fatalf("setup on %s: %s", spec, r.stderr)
		}
	}
	setup(good)

	corrupt := filepath.Join(dir, "corrupt.db")
	copyFile(t, strings.TrimPrefix(good, "sqlite:"), corrupt)
	f, err := os.OpenFile(corrupt, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	junk := make([]byte, fi.Size()-4096)
	for i := range junk {
		junk[i] = byte(i*7 + 3)
	}
	if _, err := f.WriteAt(junk, 4096); err != nil { // the header stays: SQLite opens it, then finds damage
		t.Fatal(err)
	}
	f.Close()
	notDB := filepath.Join(dir, "notes.db")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("hello, not a database\n", 300)), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	execSQLite(t, foreign, `CREATE TABLE invoices (id INTEGER PRIMARY KEY, total TEXT)`)
	newer := filepath.Join(dir, "newer.db")
	setup("sqlite:" + newer)
	execSQLite(t, newer, `INSERT INTO rewind_store_schema (version) VALUES (99)`)

	bad := map[string]string{
		"unknown store":             "mysql://rewind:" + password + "@127.0.0.1/x",
		"empty store":               "",
		"sqlite without a path":     "sqlite:",
		"corrupt sqlite":            "sqlite:" + corrupt,
		"not a database":            "sqlite:" + notDB,
		"not rewind's database":     "sqlite:" + foreign,
		"newer sqlite schema":       "sqlite:" + newer,
		"postgres nobody listening": "postgres://rewind:" + password + "@127.0.0.1:1/rewind",
		"postgres bad port":         "postgres://rewind:" + password + "@127.0.0.1:notaport/rewind",
		"postgres bad URL":          "postgres://rewind:" + password + "@[::1/rewind",
	}
	goods := map[string]string{"sqlite": good} // backendtest:own: each store's bad specs are its own
	pgOn := pgtest.Available(t)
	if pgOn {
		pg := cli.FreshPostgres(t)
		setup(pg)
		goods["postgres"] = pg
		bad["postgres wrong password, no sslmode"] = wrongPassword(t, pg)
		newerPG := cli.FreshPostgres(t)
		setup(newerPG)
		execPG(t, newerPG, `insert into rewind_schema_migrations (version, name) values (99, 'from the future')`)
		bad["newer postgres schema"] = newerPG
	}
	// LangGraph's databases: the commands that read open them read-only,
	// every other refuses them before rewind's opener touches them.
	langgraphs := map[string]string{
		"LangGraph Python sqlite": "sqlite:" + lgtest.Copy(t, "sqlite-python.db"),
		"LangGraph JS sqlite":     "sqlite:" + lgtest.Copy(t, "sqlite-js.db"),
	}
	if pgOn {
		langgraphs["LangGraph Python postgres"] = lgtest.Dump(t, "postgres-python.sql")
		langgraphs["LangGraph JS postgres"] = lgtest.Dump(t, "postgres-js.sql")
	}
	lgTables := map[string]string{}
	sums := map[string][32]byte{}
	for _, p := range []string{corrupt, notDB, foreign, newer} {
		sums[p] = lgtest.Sum(t, p)
	}
	for _, spec := range langgraphs {
		if path, ok := strings.CutPrefix(spec, "sqlite:"); ok {
			sums[path] = lgtest.Sum(t, path)
		} else {
			lgTables[spec] = lgtest.Counts(t, spec)
		}
	}
	before := snapshot(t, []string{"REWIND_STORE=" + good}, "t")

	type tc = badCase
	var cases []tc
	for p, fm := range storeForms {
		words := strings.Fields(p)
		for what, spec := range langgraphs {
			args := append(append([]string{}, words...), "--store", spec)
			if fm.args != nil {
				// No thread nosuch there, nor one it begins (LangGraph's
				// are t-main and t-fail: "t" is a prefix of both).
				args = append(args, fm.args("nosuch", "1")...)
			}
			switch {
			case readsLangGraph[p] && fm.args == nil:
				// threads reads it whole (cli/langgraph_test.go); the
				// TUI opens it read-only (tui/source_test.go).
			case readsLangGraph[p]:
				cases = append(cases, tc{fmt.Sprintf("%s/unknown thread on %s", p, what), args, 1, "not found"})
			default:
				cases = append(cases, tc{fmt.Sprintf("%s/%s", p, what), args, 2, "is a LangGraph database"})
			}
		}
		for what, spec := range bad {
			args := append(append([]string{}, words...), "--store", spec)
			if fm.args != nil {
				args = append(args, fm.args("t", "1")...)
			}
			code := 0
			if what == "empty store" {
				code = 2
			}
			cases = append(cases, tc{fmt.Sprintf("%s/%s", p, what), args, code, ""})
		}
		if fm.args == nil || fm.creates {
			continue
		}
		for name, spec := range goods {
			cases = append(cases, tc{fmt.Sprintf("%s/unknown thread on %s", p, name), append(append(append([]string{}, words...), "--store", spec), fm.args("nope", "1")...), 1, ""})
			if fm.checkpoint {
				cases = append(cases, tc{fmt.Sprintf("%s/unknown checkpoint on %s", p, name), append(append(append([]string{}, words...), "--store", spec), fm.args("t", "99")...), 1, ""})
			}
		}
	}
	cases = append(cases, unknownTenantCases(good)...)
	long := strings.Repeat("x", 64<<10)
	for p, fm := range storeForms {
		words := strings.Fields(p)
		if fm.args == nil {
			continue
		}
		if !fm.creates {
			cases = append(cases, tc{p + "/64 KB thread id", append(append(append([]string{}, words...), "--store", good), fm.args(long, "1")...), 1, ""})
		}
		if fm.checkpoint {
			cases = append(cases, tc{p + "/64 KB checkpoint", append(append(append([]string{}, words...), "--store", good), fm.args("t", long)...), 2, ""})
		}
	}
	cases = append(cases,
		tc{"64 KB command", []string{long}, 2, ""},
		tc{"64 KB flag", []string{"log", "t", "--" + long}, 2, ""},
		tc{"64 KB flag value", []string{"run", "--thread", "t", "--input", "x", "--auth-ttl", long}, 2, ""},
		tc{"64 KB help topic", []string{"help", long}, 2, ""},
		tc{"failing fan-out", []string{"run", "--store", good, "--thread", "fan", "--input", "Where is my parcel SO20260901, what is the order status, and can I get a refund?", "--mock-fail", "executor"}, 1, "carry on with `rewind resume fan`"},
	)
	for p, args := range noStore {
		if args == nil {
			args = []string{p, notDB}
		}
		cases = append(cases, tc{p + "/bad input", args, 0, ""})
	}
	results := inBatches(t, env, argsOf(cases), fileIn(sums))
	t.Run("each", func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := results[i]
				msg := strings.TrimSpace(r.stderr)
				switch {
				case r.code == 0 || (c.code != 0 && r.code != c.code):
					t.Errorf("exit %d, want a failure (%d)\nstdout: %s\nstderr: %s", r.code, c.code, r.stdout, r.stderr)
				case strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "rewind: "):
					t.Errorf("want one line starting with \"rewind: \", got %q", msg)
				case !strings.Contains(msg, c.says):
					t.Errorf("the error does not say %q: %s", c.says, msg)
				}
				if len(msg) > 1000 {
					t.Errorf("a %d-byte error: long ids and values must be clipped: %.300s…", len(msg), msg)
				}
				out := r.stdout + r.stderr
				if strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") {
					t.Errorf("panic: %s", out)
				}
				if strings.Contains(out, password) {
					t.Errorf("the password is printed: %s", out)
				}
			})
		}
	})
	for p, want := range sums {
		if lgtest.Sum(t, p) != want {
			t.Errorf("%s was changed by a command that refused it", p)
		}
		for _, beside := range []string{"-wal", "-shm", "-journal", ".sources.json"} {
			if _, err := os.Stat(p + beside); err == nil {
				t.Errorf("a command left %s beside %s", beside, p)
			}
		}
	}
	for spec, want := range lgTables {
		if got := lgtest.Counts(t, spec); got != want {
			t.Errorf("the tables of a LangGraph database changed: %s, were %s", got, want)
		}
	}
	if _, err := os.Stat(fallback); !os.IsNotExist(err) {
		t.Errorf("a command fell back to $REWIND_STORE (%v)", err)
	}
	if after := snapshot(t, []string{"REWIND_STORE=" + good}, "t"); after != before {
		t.Error("a refused command changed stored data")
	}
}

// badCase is a bad input: a command that must fail on one line.
type badCase struct {
	name string
	args []string
	code int    // 0: any failure
	says string // in the message, when not ""
}

// argsOf is each case's command line.
func argsOf(cases []badCase) [][]string {
	lines := make([][]string, len(cases))
	for i, c := range cases {
		lines[i] = c.args
	}
	return lines
}

// unknownTenantCases give every command a tenant the store does not
// know: one line, exit 2, nothing written (the caller's snapshot); the
// tenant commands manage tenants, and take no --tenant.
func unknownTenantCases(good string) []badCase {
	var out []badCase
	for p, fm := range storeForms {
		if strings.HasPrefix(p, "tenant") {
			continue
		}
		args := append(append([]string{}, strings.Fields(p)...), "--store", good, "--tenant", "nosuch")
		if fm.args != nil {
			args = append(args, fm.args("t", "1")...)
		}
		out = append(out, badCase{p + "/unknown tenant", args, 2, "tenant nosuch does not exist"})
	}
	return append(out, badCase{"run/bad tenant name", []string{"run", "--store", good, "--tenant", "no spaces", "--thread", "t", "--input", "hi"}, 2, "--tenant"})
}

// readsLangGraph are the commands that read a LangGraph database; every
// other refuses it.
var readsLangGraph = map[string]bool{"threads": true, "log": true, "show": true, "events": true, "diff": true, "search": true, "tui": true, "": true}

// wrongPassword is db's URL as role rewind_password_test with a wrong
// password and no sslmode (so pgx tries TLS first, then plain: two
// failures in one error). The cluster .ci/pg.sh starts checks that role's
// password; one that trusts it cannot show the failure, and is skipped.
func wrongPassword(t *testing.T, db string) string {
	execPG(t, os.Getenv("REWIND_TEST_POSTGRES"), `do $$ begin
  create role rewind_password_test login password 'right-one';
exception when duplicate_object then null; end $$`)
	u, _ := url.Parse(db)
	u.User = url.UserPassword("rewind_password_test", password)
	u.RawQuery = ""
	ctx := context.Background()
	if c, err := pgx.Connect(ctx, u.String()); err == nil {
		c.Close(ctx)
		t.Skip("this cluster does not check rewind_password_test's password (.ci/pg.sh sets that up)")
	}
	return u.String()
}

func execPG(t *testing.T, db, stmt string) {
	t.Helper()
	c, done := lgtest.Connect(t, db)
	defer done()
	if _, err := c.Exec(context.Background(), stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func execSQLite(t *testing.T, path, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// --input-file - reads the message from stdin, in a real process: the way
// to give a long message without the command line.
func TestInputFromStdin(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	msg := strings.Repeat("Where is my parcel SO20260901? ", 2000)[:60000]
	cmd := exec.Command(binary, "run", "--store", spec, "--thread", "stdin", "--input-file", "-", "--interrupt-before", "planner")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	cmd.Stdin = strings.NewReader(msg + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run --input-file -: %v\n%s", err, out)
	}
	var show struct {
		State struct {
			Messages []struct{ Content string } `json:"messages"`
		} `json:"state"`
	}
	mustDecode(t, rewind(t, nil, "show", "stdin", "--store", spec, "--json").stdout, &show)
	if len(show.State.Messages) != 1 || show.State.Messages[0].Content != msg {
		t.Fatalf("stored %d message(s); want the %d bytes read from stdin", len(show.State.Messages), len(msg))
	}
}

// fileIn keys a command line by the file of sums it names, if any: the
// commands on each file whose bytes are checked run one at a time.
func fileIn(sums map[string][32]byte) func([]string) string {
	return func(args []string) string {
		for _, a := range args {
			if _, kept := sums[strings.TrimPrefix(a, "sqlite:")]; kept {
				return a
			}
		}
		return ""
	}
}
