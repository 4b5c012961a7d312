package tui

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/engine/bench"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/backend"
	"rewind/store/backend/backendtest"
	"rewind/store/memory"
)

const bigCheckpoints = 10_000

var (
	bigOnce sync.Once
	bigEng  *engine.Engine
	bigErr  error
)

// bigThread is a thread of 10,000 checkpoints written straight through
// UpdateState (no model calls): turns of a user message, executor tool
// calls with results and findings, a critic remark and a reply, compacted
// into the summary whenever more than 20 messages pile up, with a fork
// every 500 checkpoints, so it has the shape of a long real conversation.
func bigThread(tb testing.TB) *engine.Engine {
	tb.Helper()
	bigOnce.Do(func() {
		ctx := context.Background()
		e, err := engine.New(memory.New(), ticket.NewGraph(), ticket.NewMock())
		if err != nil {
			bigErr = err
			return
		}
		var last int64
		var tail []ticket.Message
		next := 1
		version := 0
		for n := 0; n < bigCheckpoints; n++ {
			var msgs []ticket.Message
			switch n % 5 {
			case 0:
				msgs = []ticket.Message{{Role: ticket.RoleUser, Speaker: "user", Content: fmt.Sprintf("Turn %d: my order SO2026%04d hasn't arrived: where is the parcel, and can I get a refund?", n/5, n%10000)}}
			case 1:
				msgs = []ticket.Message{
					{Role: ticket.RoleAssistant, Speaker: "executor[t-1-shipping]", Content: `calling shipping_events({"order":"SO20260901"})`,
						ToolCall: &ticket.ToolCall{ID: fmt.Sprintf("call-%d", n), Name: "shipping_events", Args: []byte(`{"order":"SO20260901"}`)}},
					{Role: ticket.RoleTool, Speaker: "tool[shipping_events]", Content: `{"carrier":"PostNL","eta":"2026-09-10","lastScan":"2026-09-08 14:41 sorting hub Utrecht"}`, ToolCallID: fmt.Sprintf("call-%d", n)},
				}
			case 2:
				msgs = []ticket.Message{{Role: ticket.RoleAssistant, Speaker: "executor[t-1-shipping]", Content: "t-1-shipping: carrier PostNL, lastScan 2026-09-08 14:41 sorting hub Utrecht, eta 2026-09-10."}}
			case 3:
				msgs = []ticket.Message{{Role: ticket.RoleAssistant, Speaker: "critic", Content: "review 1: approved t-1-shipping"}}
			case 4:
				msgs = []ticket.Message{{Role: ticket.RoleAssistant, Speaker: "reply", Content: "Here is where things stand:\n- t-1-shipping: carrier PostNL, eta 2026-09-10."}}
			}
			for i := range msgs {
				msgs[i].Index = next
				next++
			}
			tail = append(tail, msgs...)
			writes := []engine.Write{
				engine.Put("messages", msgs),
				engine.Put("subtasks", []ticket.Subtask{{ID: "t-1-shipping", Goal: "look up shipping events (order SO20260901)", Topic: "shipping", Status: ticket.StatusDone, ToolCalls: n % 3, Result: "carrier PostNL"}}),
			}
			if len(tail) > ticket.MaxMessages {
				cut := len(tail) - ticket.KeepRecent
				for cut > 0 && tail[cut].Role == ticket.RoleTool {
					cut--
				}
				version++
				tail = append([]ticket.Message(nil), tail[cut:]...)
				writes = append(writes, engine.Replace("messages", tail),
					engine.Put("summary", ticket.Summary{Text: fmt.Sprintf("#1 user: the first turns, compacted %d times", version), From: 1, To: tail[0].Index - 1, Count: tail[0].Index - 1, Speakers: []string{"user", "critic", "reply"}, HistoryVersion: version, Trigger: "count exceeds 20"}),
					engine.Put("historyVersion", 1))
			}
			base := last
			if n > 0 && n%500 == 0 {
				base = last - 3 // a fork: a new branch from a few checkpoints back
			}
			cp, err := e.UpdateState(ctx, "big", base, writes, "")
			if err != nil {
				bigErr = err
				return
			}
			last = cp.ID
		}
		bigEng = e
	})
	if bigErr != nil {
		tb.Fatal(bigErr)
	}
	return bigEng
}

// runSync runs a command and feeds what it returns back into the model
// until nothing is left (the benchmark's paths start no timers).
func runSync(m *Model, cmd tea.Cmd) { runUntil(m, cmd, nil) }

// runUntil is runSync that stops once done holds (nil: never), leaving
// the rest of the commands unrun.
func runUntil(m *Model, cmd tea.Cmd, done func() bool) {
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 && (done == nil || !done()) {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		msg := c()
		if w, ok := msg.(watchStartedMsg); ok && w.cancel != nil {
			w.cancel() // follow mode waits for changes: not synchronously
			continue
		}
		if batch, ok := msg.(tea.BatchMsg); ok {
			queue = append(queue, batch...)
			continue
		}
		if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().String() == "tea.sequenceMsg" {
			for i := 0; i < v.Len(); i++ {
				c, _ := v.Index(i).Interface().(tea.Cmd)
				queue = append(queue, c)
			}
			continue
		}
		_, next := m.Update(msg)
		queue = append(queue, next)
	}
}

func openBig(tb testing.TB, w, h int) *Model {
	e := bigThread(tb)
	m := New(context.Background(), depsFor(e), Settings{Thread: "big"})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	runSync(m, m.Init())
	if m.timeline.tree.len() != bigCheckpoints || m.cur == nil {
		tb.Fatalf("the big thread did not load: %d checkpoints, detail %v", m.timeline.tree.len(), m.cur != nil)
	}
	return m
}

func TestTenThousandCheckpoints(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a 10,000-checkpoint thread")
	}
	m := openBig(t, 160, 48)
	if num(m.timeline.tree.cursor) != bigCheckpoints {
		t.Fatalf("the cursor should start on the newest checkpoint, is on #%s", m.timeline.tree.cursor)
	}
	_, total := m.timeline.tree.position()
	leafDepth := m.timeline.tree.nodes[idOf(bigCheckpoints)].depth
	if total != leafDepth+1 || total >= bigCheckpoints {
		t.Fatalf("the newest branch should be shorter than the thread (forks), got %d/%d", total, bigCheckpoints)
	}
	_, cmd := m.Update(keyMsg("home"))
	runSync(m, cmd)
	if m.cur == nil || m.cur.cp.ID != 1 || m.timeline.position[0] != 1 {
		t.Fatalf("Home should reach #1, at #%s pos %v", m.timeline.tree.cursor, m.timeline.position)
	}
	// → walks the branch; End reaches its leaf, the newest checkpoint.
	for i := 0; i < 200; i++ {
		_, cmd := m.Update(keyMsg("right"))
		if cmd != nil {
			m.Update(cmd())
		}
	}
	if m.timeline.position[0] != 201 || m.cur.id != m.timeline.tree.cursor {
		t.Fatalf("→ ×200 from #1 should be at step 201 showing it, at %v showing #%d", m.timeline.position, m.cur.cp.ID)
	}
	_, cmd = m.Update(keyMsg("end"))
	runSync(m, cmd)
	if num(m.timeline.tree.cursor) != bigCheckpoints || m.cur.cp.ID != bigCheckpoints {
		t.Fatalf("End should reach #%d, at #%s", bigCheckpoints, m.timeline.tree.cursor)
	}
	if v := m.View(); len(v) == 0 {
		t.Fatal("empty view")
	}
}

// BenchmarkScrubStep is one scrub step (← and →, back and forth over the
// newest branch), timed in two parts as the user sees it:
//   - frame: the key's Update and the View the terminal then draws (the
//     timeline moved; the panes show the checkpoint when it is cached, else
//     say they are loading it). No I/O: what a held-down key waits for.
//   - settled: then the Cmds the step asked for, run inline as Bubble Tea
//     runs them on its goroutines (the checkpoint's load, the words of rows
//     that came on screen), the Updates with their results, and the View:
//     the screen showing the new checkpoint whole.
//
// ns/op is a settled step. It also reports the heap after loading the
// thread, and how many frames showed their checkpoint whole (read ahead
// into the cache by the step before: thread.go's prefetch). The default panes are shown (the conversation; the inspector
// beside it when wide): the State pane's fidelity badge is checked only
// while that pane shows (fidelity.go).
//
// The synthetic cases scrub a 10,000-checkpoint thread of the memory store;
// the real-* cases a real conversation: 1000 turns of the ticket graph run
// by engine/bench (what `rewind bench --turns 1000` writes, 8000
// checkpoints), whose rows are grouped by turn and show the customer's
// words, on the memory store and (real-sqlite-*) on a SQLite file, what a
// user opens.
func BenchmarkScrubStep(b *testing.B) {
	type bcase struct {
		name string
		open func(testing.TB, int, int) *Model
		size [2]int
	}
	var cases []bcase
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		cases = append(cases, bcase{fmt.Sprintf("%dx%d", size[0], size[1]), openBig, size})
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, be := range backendtest.All {
			name, open, _ := realCase(be, size[0], size[1])
			cases = append(cases, bcase{name, open, size})
		}
	}
	for _, c := range cases {
		size := c.size
		b.Run(c.name, func(b *testing.B) {
			m := c.open(b, size[0], size[1])
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			left, right := keyMsg("left"), keyMsg("right")
			dir := left
			frames := make([]time.Duration, 0, b.N)
			steps := make([]time.Duration, 0, b.N)
			atOnce := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				_, cmd := m.Update(dir)
				_ = m.View()
				frames = append(frames, time.Since(start))
				if m.cur != nil && m.cur.id == m.timeline.tree.cursor {
					atOnce++
				}
				runSync(m, cmd)
				_ = m.View()
				steps = append(steps, time.Since(start))
				if m.timeline.position[0] <= 1 {
					dir = right
				} else if m.timeline.position[0] >= m.timeline.position[1] {
					dir = left
				}
			}
			b.StopTimer()
			if m.cur == nil || m.cur.id != m.timeline.tree.cursor {
				b.Fatalf("the step did not settle: showing %v, cursor @%s", m.cur != nil, m.timeline.tree.cursor)
			}
			for _, d := range []struct {
				name string
				ds   []time.Duration
			}{{"frame", frames}, {"settled", steps}} {
				sort.Slice(d.ds, func(i, j int) bool { return d.ds[i] < d.ds[j] })
				b.ReportMetric(float64(d.ds[len(d.ds)/2].Microseconds()), "µs-median/"+d.name)
				b.ReportMetric(float64(d.ds[len(d.ds)*99/100].Microseconds()), "µs-p99/"+d.name)
			}
			b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "MiB-heap-loaded")
			b.ReportMetric(100*float64(atOnce)/float64(b.N), "%-shown-in-frame")
		})
	}
}

// BenchmarkFirstScreen opens the real 1,000-turn conversation (see
// BenchmarkScrubStep) at 80×24: New, the window's size, and the commands
// Init starts run one after the other, each result fed back to Update,
// until the screen shows the newest checkpoint; then the View. One core
// does everything the program would spread over its goroutines, so this is
// the open's work before its first screen; what the program does after it
// (older pages of the timeline, the thread's costs if not read yet) is left
// unrun.
func BenchmarkFirstScreen(b *testing.B) {
	for _, be := range backendtest.All {
		name, open, real := realCase(be, 80, 24)
		b.Run(name, func(b *testing.B) {
			open(b, 80, 24) // writes the thread once
			eng := real.eng
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m := New(context.Background(), depsFor(eng), Settings{Thread: "real"})
				m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
				runUntil(m, m.Init(), func() bool { return m.cur != nil && m.cur.id == m.timeline.tree.maxID })
				if v := m.View(); !strings.Contains(v, fmt.Sprintf("· @%s", m.timeline.tree.maxID)) {
					b.Fatalf("the first screen does not show @%s:\n%s", m.timeline.tree.maxID, v)
				}
			}
		})
	}
}

// realTurns is how long the real conversation of the benchmark is.
const realTurns = 1000

// realThread is the real conversation (see BenchmarkScrubStep) written
// once per test binary into a store that open makes.
type realThread struct {
	once sync.Once
	st   store.Store
	eng  *engine.Engine
	err  error
}

// close closes the store, if open wrote one.
func (r *realThread) close() {
	if r.st != nil {
		_ = r.st.Close()
	}
}

func (r *realThread) open(tb testing.TB, w, h int, open func() (store.Store, string, error)) *Model {
	r.once.Do(func() {
		st, name, err := open()
		if err != nil {
			r.err = err
			return
		}
		r.st = st
		if _, r.err = bench.Run(context.Background(), st, name, bench.Options{Turns: realTurns, Thread: "real", Reads: 1}, nil); r.err != nil {
			return
		}
		r.eng, r.err = ticket.NewEngine(st, ticket.NewMock())
	})
	if r.err != nil {
		tb.Fatal(r.err)
	}
	if r.eng == nil { // the first open skipped: no PostgreSQL
		tb.Skip("the real conversation's store was skipped (see the first case)")
	}
	m := New(context.Background(), depsFor(r.eng), Settings{Thread: "real"})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	runSync(m, m.Init())
	if m.timeline.tree.len() < realTurns || m.cur == nil {
		tb.Fatalf("the real thread did not load: %d checkpoints, detail %v", m.timeline.tree.len(), m.cur != nil)
	}
	return m
}

// realThreads are the real conversation on every store
// (backendtest.All), by name; realRemove removes the stores they wrote
// (TestMain calls it).
var (
	realThreads = map[string]*realThread{}
	realRemove  []func() error
)

// realCase is the benchmark case of the real conversation on be at w×h:
// real-WxH on memory, real-NAME-WxH on the others.
func realCase(be backendtest.Backend, w, h int) (name string, open func(testing.TB, int, int) *Model, real *realThread) {
	name = fmt.Sprintf("real-%dx%d", w, h)
	if be.Shared {
		name = fmt.Sprintf("real-%s-%dx%d", be.Name, w, h)
	}
	real = realThreads[be.Name]
	if real == nil {
		real = &realThread{}
		realThreads[be.Name] = real
	}
	// The store outlives the benchmark that writes it, so that the others
	// read it too.
	return name, func(tb testing.TB, w, h int) *Model {
		return real.open(tb, w, h, func() (store.Store, string, error) {
			spec, remove := be.Lasting(tb, "tui_bench")
			realRemove = append(realRemove, remove)
			st, err := backend.Open(context.Background(), spec)
			return st, spec, err
		})
	}, real
}
