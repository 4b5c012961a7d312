package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"rewind/store/langgraph/lgtest"
)

// TestBrowseEndToEndInTmux runs the real `rewind tui` on a copy of the
// Python SqliteSaver fixture as a LangGraph developer would: to the fork
// point, the conversation with the tool call joined to its result, the
// failed fan-out's error write, a diff of two checkpoints (and not in
// another thread), a search and its hit, the help, a writing key refused,
// and a checkpoint another process appends showing up (follow). On PostgreSQL
// too when REWIND_TEST_POSTGRES is set.
func TestBrowseEndToEndInTmux(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { // backendtest:own: LangGraph's saver fixtures, not rewind's stores
		path := lgtest.Copy(t, "sqlite-python.db")
		w := lgtest.OpenWriter(t, path)
		browseE2E(t, "sqlite:"+path, func() {
			w.Checkpoint("t-fail", "", "1f1ed297-0000-6000-8000-000000000001", "1f1ed296-8a78-63f4-8003-43a23134f7fa", "loop", 4,
				map[string]any{"messages": []any{map[string]any{"type": "human", "content": "written while you watched"}}}, "")
		})
	})
	t.Run("postgres", func(t *testing.T) { // backendtest:own
		browseE2E(t, lgtest.Dump(t, "postgres-python.sql"), nil)
	})
}

func browseE2E(t *testing.T, storeSpec string, appendOne func()) {
	tmuxBin := lookTmux(t)
	dir := t.TempDir()
	bin := rewindBinary(t)
	socket := fmt.Sprintf("rewind-browse-%d-%d", os.Getpid(), time.Now().UnixNano())
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

	waitFor("the threads", "t-main", "└ review:", "LangGraph database, read-only")
	send("j", "Enter")
	waitFor("t-main's timeline at its head", "thread t-main · 12/12", "└→ #3 tool: 3 hits for tables")
	// To the fork point: the third checkpoint has two children, the
	// update_state branch drawn under it.
	send("g", "j", "j")
	waitFor("the fork point", "thread t-main · 3/12", "▸ ⑂ ", "└✎", "update")
	waitFor("the call not answered yet at the fork", "┌ search call_1", "└→ no result yet")
	// Down its main line: the AI message's tool call joined to its result.
	send(":", "z", "z", "Enter")
	waitFor("the goto prefix refused", "no checkpoint of this chain starts with zz")
	send("g", "j", "j", "j", "j", "j", "j", "j")
	waitFor("the tool call joined", "thread t-main · 8/12", "┌ search call_1", "└→ #3 tool: 3 hits for tables", "← call_1 of #2")
	// Compare it with the update_state branch's last checkpoint, across
	// the fork.
	send("m", "g", "j", "j", "j", "j", "j", "j", "=")
	waitFor("the diff", "thread t-main · 7/12", "different branches, parting after @", "@@ ")
	// A search, its list, enter to a hit; the help, every key there.
	send("/", "t", "a", "b", "l", "e", "s", "Enter")
	waitFor("the search's hits", `Search "tables" · 3 match(es)`, "#3 tool (search)")
	send("Enter")
	waitFor("the first hit", "thread t-main · 12/12", "match 1/3:")
	send("?")
	waitFor("the help", "Keys · LangGraph browser", "search the messages", "off: fork here")
	send("Escape", "f")
	waitFor("a writing key refused", "read-only: forking would write to this LangGraph database")
	// The failed fan-out: t-fail's writes, the error write and its text;
	// t-main's diff stays in t-main.
	send("t", "k", "Enter", "4")
	waitFor("no diff of t-main's in t-fail", "thread t-fail · 5/5", "m marks the checkpoint")
	send("3")
	waitFor("the failed fan-out", "thread t-fail · 5/5", "[error] __error__", "error: RuntimeError('worker 1 exploded')")
	if appendOne != nil {
		appendOne()
		send("1")
		waitFor("the appended checkpoint", "thread t-fail · 6/6", "written while you watched")
	}
	send("q")
}
