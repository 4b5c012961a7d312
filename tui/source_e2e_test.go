package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"rewind/store/langgraph/lgtest"
)

// TestReadOnlySourceEndToEndInTmux runs the real `rewind tui` on a copy
// of the Python SqliteSaver fixture as a LangGraph developer would: the
// threads with the subgraph run under t-main, t-main's conversation with
// the tool call joined to its result, : and / on the Source, the help
// with the writing keys off, a writing key refused, the subgraph's own
// chain, the failed fan-out's error write, and a checkpoint another
// process appends showing up (the poll). On PostgreSQL too when
// REWIND_TEST_POSTGRES is set.
func TestReadOnlySourceEndToEndInTmux(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { // backendtest:own: LangGraph's saver fixtures, not rewind's stores
		path := lgtest.Copy(t, "sqlite-python.db")
		w := lgtest.OpenWriter(t, path)
		readOnlyE2E(t, "sqlite:"+path, func() {
			w.Checkpoint("t-fail", "", "1f1ed297-0000-6000-8000-000000000001", "1f1ed296-8a78-63f4-8003-43a23134f7fa", "loop", 4,
				map[string]any{"messages": []any{map[string]any{"type": "human", "content": "written while you watched"}}}, "")
		})
	})
	t.Run("postgres", func(t *testing.T) { // backendtest:own
		readOnlyE2E(t, lgtest.Dump(t, "postgres-python.sql"), nil)
	})
}

// readOnlyE2E drives the TUI on the Python fixture at storeSpec; on the
// SQLite copy (appendOne set, the ids its own) also : to a short form and
// a checkpoint appended while it runs.
func readOnlyE2E(t *testing.T, storeSpec string, appendOne func()) {
	tmuxBin := lookTmux(t)
	dir := t.TempDir()
	bin := rewindBinary(t)
	socket := fmt.Sprintf("rewind-readonly-%d-%d", os.Getpid(), time.Now().UnixNano())
	shell := fmt.Sprintf("env XDG_STATE_HOME=%s XDG_CONFIG_HOME=%s TERM=tmux-256color %s tui --store '%s' 2>%s",
		filepath.Join(dir, "state"), filepath.Join(dir, "config"), bin, storeSpec, filepath.Join(dir, "stderr"))
	term := newTmux(t, tmuxBin, socket, "e2e", filepath.Join(dir, "stderr"))
	term.start(120, 40, shell)
	waitFor := term.waitFor
	send := func(keys ...string) {
		t.Helper()
		for _, k := range keys { // one at a time, as a person types
			term.send(k)
		}
	}

	waitFor("the threads", "t-fail", "t-main", "└ review:", "3 checkpoints · from @1f1ed296…")
	send("n")
	waitFor("n refused on the list", "starting a thread is off: this LangGraph database is opened read-only")
	send("j", "Enter")
	waitFor("t-main at its head", "thread t-main", "6/6", "└→ #3 tool: 3 hits for tables", "← call_1 of #2", "read-only")
	send(":", "z", "z", "Enter")
	waitFor("an unknown prefix named", "checkpoint zz not found in thread t-main")
	if appendOne != nil {
		send(":", "1", "f", "1", "e", "d", "2", "9", "6", "…", "3", "1", "2", "0", "Enter")
		waitFor("a short form gone to", "at @1f1ed296…3120 3/6")
	}
	send("/", "t", "a", "b", "l", "e", "s", "Enter")
	waitFor("the search's hits", `Search "tables" · 3 match(es)`, "#3 tool (search)")
	send("Enter")
	waitFor("the first hit", "6/6", "match 1/3")
	send("?")
	waitFor("the help", "Keys · thread view", "off: write a message", "off: fork here", "search")
	term.send("qf") // in one burst: q closes the help, f is the thread view's
	waitFor("the help closed and f refused", "t threads • tab pane", "forking is off: this LangGraph database")
	// The subgraph run: its own chain, its namespace in the status bar.
	send("t")
	waitFor("the threads list", "o open")
	send("j", "Enter")
	waitFor("the subgraph's chain", "thread t-main › review:", "3/3", "summary of 3 findings")
	// The failed fan-out: t-fail's error write and its text.
	send("t")
	waitFor("the threads list", "o open")
	send("k", "k", "Enter")
	waitFor("t-fail", "thread t-fail")
	send("3")
	waitFor("the failed fan-out", "thread t-fail", "[error] __error__", "error: RuntimeError('worker 1")
	if appendOne != nil {
		appendOne()
		send("1")
		waitFor("the appended checkpoint", "thread t-fail", "written while you watched")
	}
	send("q")
}
