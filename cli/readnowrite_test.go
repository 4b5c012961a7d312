package cli_test

import (
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind/cli/rewindbin"
	"rewind/store/langgraph/lgtest"
	"rewind/store/postgres/pgtest"
)

// A read never writes, anywhere. Every command that reads (and the TUI
// given a thread, which it checks before its screen opens) runs on each
// layout that is neither a rewind store of this rewind's schema nor a
// LangGraph database of the layout PostgresSaver or SqliteSaver leave: a
// ShallowPostgresSaver database (read, as LangGraph too), a PostgresSaver
// whose setup() stopped half way, tables of LangGraph's names with other
// columns, another app's database, an empty database, an empty or a
// missing SQLite file, a store of an older rewind. A command that writes
// refuses each in one line naming what was found, except an empty place
// (rewind makes its store there) and an older store of its own (it
// upgrades it). After every command the PostgreSQL tables hold what they
// held (names, row counts and contents) and the SQLite files and their
// directories are as they were, byte for byte.
func TestReadsNeverWrite(t *testing.T) {
	t.Parallel()
	type layout struct {
		name, spec string
		// refused: what the refusal of every command says ("" when the
		// reads open it).
		refused string
		// write: what a command that writes does: "refused …" (saying
		// what follows), "creates" or "upgrades".
		write string
		// thread is one the reads find there ("" for none; t-main: a
		// LangGraph database, which the commands that read only rewind's
		// stores refuse).
		thread string
		// says is what threads and show print of the database, read (one
		// line naming what was found).
		says string
		// watch starts watching it, once a case: what it returns reads
		// its state, after every command.
		watch func(t *testing.T) func(t *testing.T) string
	}
	dir := t.TempDir()
	sqliteFile := func(name, ddl string) string {
		sub := filepath.Join(dir, name)
		if err := os.Mkdir(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(sub, "db.sqlite")
		if ddl != "" {
			execSQLite(t, path, ddl)
		}
		return path
	}
	files := func(path string) func(t *testing.T) string {
		return func(t *testing.T) string {
			t.Helper()
			var out []string
			entries, err := os.ReadDir(filepath.Dir(path))
			if err != nil {
				return err.Error()
			}
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(filepath.Dir(path), e.Name()))
				if err != nil {
					out = append(out, e.Name()+": "+err.Error())
					continue
				}
				out = append(out, fmt.Sprintf("%s %x", e.Name(), sha256.Sum256(b)))
			}
			return strings.Join(out, ", ")
		}
	}
	empty := sqliteFile("empty", "")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A store the release before sqlite's schema 9 wrote
	// (store/backend/testdata/upgrade).
	older := sqliteFile("older", "")
	if err := os.WriteFile(older, gunzip(t, "store-v8.db.gz"), 0o600); err != nil {
		t.Fatal(err)
	}
	layouts := []layout{
		{name: "an empty SQLite file", spec: "sqlite:" + empty, write: "creates"},
		{name: "a missing SQLite file", spec: "sqlite:" + filepath.Join(dir, "missing", "db.sqlite"), write: "creates"},
		{name: "SQLite tables of LangGraph's names, other columns", spec: "sqlite:" + sqliteFile("names", `CREATE TABLE checkpoints (id INTEGER PRIMARY KEY, body TEXT); CREATE TABLE writes (id INTEGER); INSERT INTO checkpoints (body) VALUES ('x')`),
			refused: "neither a rewind store nor a LangGraph database: table checkpoints lacks thread_id"},
		{name: "another app's SQLite file", spec: "sqlite:" + sqliteFile("other", `CREATE TABLE invoices (id INTEGER PRIMARY KEY, total TEXT); INSERT INTO invoices (total) VALUES ('9.99')`),
			refused: "with neither a rewind store nor LangGraph's checkpoint tables (checkpoints and writes): it has invoices"},
		{name: "an older rewind's SQLite store", spec: "sqlite:" + older, refused: "a store of an older rewind", write: "upgrades", thread: "paused"},
	}
	for i := range layouts {
		path := strings.TrimPrefix(layouts[i].spec, "sqlite:")
		state := files(path)
		layouts[i].watch = func(*testing.T) func(*testing.T) string { return state }
		if layouts[i].refused != "" && layouts[i].write == "" {
			layouts[i].write = "refused " + layouts[i].refused
		}
	}
	if pgtest.Available(t) {
		half := cliFreshPostgres(t)
		execPG(t, half, lgtest.HalfSetUp)
		started := cliFreshPostgres(t)
		execPG(t, started, `CREATE TABLE checkpoint_migrations (v INTEGER PRIMARY KEY)`)
		names := cliFreshPostgres(t)
		execPG(t, names, `CREATE TABLE checkpoints (id serial, body text); CREATE TABLE checkpoint_blobs (id int); CREATE TABLE checkpoint_writes (id int); INSERT INTO checkpoints (body) VALUES ('x')`)
		olderPG := lgtest.Load(t, "store-pg-v6.sql", gunzip(t, "store-pg-v6.sql.gz"))
		layouts = append(layouts,
			layout{name: "ShallowPostgresSaver", spec: lgtest.Shallow(t, lgtest.Dump(t, "postgres-python.sql")), thread: "t-main",
				says:  "LangGraph database (ShallowPostgresSaver: only the newest checkpoint of each thread), read-only",
				write: "refused is a LangGraph ShallowPostgresSaver database: it keeps only the newest checkpoint of each thread"},
			layout{name: "PostgresSaver whose setup() stopped half way", spec: half,
				refused: "is a LangGraph PostgresSaver database whose setup() stopped half way: it has checkpoints, checkpoint_migrations (migrations 0–1) but not checkpoint_blobs, checkpoint_writes"},
			layout{name: "PostgresSaver whose setup() stopped after migration 0", spec: started,
				refused: "whose setup() stopped half way: it has checkpoint_migrations (no migration recorded)"},
			layout{name: "PostgreSQL tables of LangGraph's names, other columns", spec: names,
				refused: "neither a rewind store nor a LangGraph database: its table checkpoints is named like LangGraph's but lacks thread_id"},
			layout{name: "an empty PostgreSQL database", spec: cliFreshPostgres(t), write: "creates"},
			layout{name: "an older rewind's PostgreSQL store", spec: olderPG, refused: "a store of an older rewind", write: "upgrades", thread: "paused"},
		)
		for i := range layouts[len(layouts)-6:] {
			l := &layouts[len(layouts)-6+i]
			spec := l.spec
			// One session of the test's a layout, not one a command.
			l.watch = func(t *testing.T) func(*testing.T) string {
				w := lgtest.Watch(t, spec)
				return func(t *testing.T) string { return w.Tables(t) }
			}
			if l.refused != "" && l.write == "" {
				l.write = "refused " + l.refused
			}
		}
	}

	reads := func(th string) [][]string {
		return [][]string{
			{"threads"}, {"threads", "--json"}, {"threads", "--tokens"},
			{"log", th}, {"log", th, "--json"},
			{"show", th}, {"show", th, "1"}, {"show", th, "--json"}, {"show", th, "--calls"}, {"show", th, "--message", "1"},
			{"events", th, "1"}, {"runs", th}, {"runs", th, "--json"}, {"stats", th}, {"stats", "--all", "--json"}, {"search", th, "parcel"}, {"search", th, "parcel", "--json"}, {"diff", th, "1", "2"},
			{"check", "fidelity", th}, {"resume", th, "--plan"}, {"source"},
			{"tui", "no-such-thread"},
		}
	}
	// Each layout is a file or database of its own.
	rewindbin.Cases(t, layouts, func(l layout) string { return l.name }, func(t *testing.T, l layout) {
		state := l.watch(t)
		before := state(t)
		th := l.thread
		if th == "" {
			th = "t"
		}
		// What each read printed: the checks of threads' and show's output
		// below read it, not a second run of the same command.
		out := map[string]result{}
		for _, args := range reads(th) {
			if args[0] == "tui" && l.write == "upgrades" {
				continue // the TUI writes: it upgrades the store (below, as run does)
			}
			r := rewind(t, nil, append(args, "--store", l.spec)...)
			out[strings.Join(args, " ")] = r
			msg := strings.TrimSpace(r.stderr)
			switch {
			case l.refused != "" && (r.code == 0 || !strings.Contains(msg, l.refused) || strings.Contains(msg, "\n")):
				t.Errorf("%s: exit %d, %q: want one line saying %q", strings.Join(args, " "), r.code, msg, l.refused)
			case l.refused == "" && r.code > 1 && !(l.thread == "t-main" && !readsLangGraph[args[0]] && strings.Contains(msg, "which rewind opens read-only")):
				t.Errorf("%s: exit %d: %s", strings.Join(args, " "), r.code, msg)
			case strings.Contains(r.stdout+r.stderr, "panic"):
				t.Errorf("%s: %s", strings.Join(args, " "), r.stdout+r.stderr)
			}
			if after := state(t); after != before {
				t.Fatalf("%s changed it:\nbefore %s\nafter  %s", strings.Join(args, " "), before, after)
			}
		}
		if r := out["threads"]; l.refused == "" && r.code != 0 {
			t.Errorf("threads: exit %d: %s", r.code, r.stderr)
		} else if l.thread != "" && l.refused == "" && !strings.Contains(r.stdout, l.thread) {
			t.Errorf("threads does not list %s: %s", l.thread, r.stdout)
		}
		saysWhatWasFound(t, out, l.thread, l.says)
		r := rewind(t, nil, "run", "--store", l.spec, "--thread", "w", "--input", "hi", "--interrupt-before", "executor")
		msg := strings.TrimSpace(r.stderr)
		switch want, _ := strings.CutPrefix(l.write, "refused "); {
		case l.write == "creates" || l.write == "upgrades":
			if r.code != 0 {
				t.Fatalf("run: exit %d: %s", r.code, msg)
			}
			if r := rewind(t, nil, "threads", "--store", l.spec); r.code != 0 || !strings.Contains(r.stdout, "w ") {
				t.Errorf("after run, threads: exit %d: %s%s", r.code, r.stdout, r.stderr)
			}
		case r.code != 2 || !strings.Contains(msg, want) || strings.Contains(msg, "\n"):
			t.Errorf("run: exit %d, %q: want exit 2, one line saying %q", r.code, msg, want)
			fallthrough
		default:
			if after := state(t); after != before {
				t.Errorf("run changed it:\nbefore %s\nafter  %s", before, after)
			}
		}
	})
}

// gunzip reads a fixture of store/backend/testdata/upgrade.
func gunzip(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "store", "backend", "testdata", "upgrade", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cliFreshPostgres is a database of its own on the test server.
func cliFreshPostgres(t *testing.T) string {
	t.Helper()
	return lgtest.NewDatabase(t, lgtest.Admin(t))
}

// saysWhatWasFound: threads and show (of thread) printed says, the line
// naming what the database is, on a line of their own ("" says nothing);
// out is what each command printed, by its words.
func saysWhatWasFound(t *testing.T, out map[string]result, thread, says string) {
	t.Helper()
	if says == "" {
		return
	}
	for _, args := range [][]string{{"threads"}, {"show", thread}} {
		r, ok := out[strings.Join(args, " ")]
		if !ok {
			t.Fatalf("%s was not run", strings.Join(args, " "))
		}
		if !strings.Contains("\n"+r.stdout, "\n"+says+"\n") {
			t.Errorf("%s does not say, on a line of its own, %q:\n%s", strings.Join(args, " "), says, r.stdout)
		}
	}
}
