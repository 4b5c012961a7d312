package tui

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/engine/bench"
	"rewind/engine/ticket"
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
func runSync(m *Model, cmd tea.Cmd) {
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
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
	if m.tree.len() != bigCheckpoints || m.cur == nil {
		tb.Fatalf("the big thread did not load: %d checkpoints, detail %v", m.tree.len(), m.cur != nil)
	}
	return m
}

func TestTenThousandCheckpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 10,000-checkpoint thread")
	}
	m := openBig(t, 160, 48)
	if m.tree.cursor != bigCheckpoints {
		t.Fatalf("the cursor should start on the newest checkpoint, is on #%d", m.tree.cursor)
	}
	_, total := m.tree.position()
	leafDepth := m.tree.nodes[bigCheckpoints].depth
	if total != leafDepth+1 || total >= bigCheckpoints {
		t.Fatalf("the newest branch should be shorter than the thread (forks), got %d/%d", total, bigCheckpoints)
	}
	_, cmd := m.Update(keyMsg("home"))
	runSync(m, cmd)
	if m.cur == nil || m.cur.cp.ID != 1 || m.timeline.position[0] != 1 {
		t.Fatalf("Home should reach #1, at #%d pos %v", m.tree.cursor, m.timeline.position)
	}
	// → walks the branch; End reaches its leaf, the newest checkpoint.
	for i := 0; i < 200; i++ {
		_, cmd := m.Update(keyMsg("right"))
		if cmd != nil {
			m.Update(cmd())
		}
	}
	if m.timeline.position[0] != 201 || m.cur.cp.ID != m.tree.cursor {
		t.Fatalf("→ ×200 from #1 should be at step 201 showing it, at %v showing #%d", m.timeline.position, m.cur.cp.ID)
	}
	_, cmd = m.Update(keyMsg("end"))
	runSync(m, cmd)
	if m.tree.cursor != bigCheckpoints || m.cur.cp.ID != bigCheckpoints {
		t.Fatalf("End should reach #%d, at #%d", bigCheckpoints, m.tree.cursor)
	}
	if v := m.View(); len(v) == 0 {
		t.Fatal("empty view")
	}
}

// BenchmarkScrubStep is one scrub step on a 10,000-checkpoint thread: the
// key's Update, the load of the checkpoint it asks for (its Cmd, run
// inline), the Update with the result, and the View. It reports the median
// and 99th percentile of a step and the heap after loading the thread.
//
// The real-* cases scrub a real conversation instead: 1000 turns of the
// ticket graph run by engine/bench (what `rewind bench --turns 1000`
// writes, 8000 checkpoints), whose rows are grouped by turn and show the
// customer's words (read in the step's Cmds, which the step runs).
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
		cases = append(cases, bcase{fmt.Sprintf("real-%dx%d", size[0], size[1]), openReal, size})
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
			steps := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				_, cmd := m.Update(dir)
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
			sort.Slice(steps, func(i, j int) bool { return steps[i] < steps[j] })
			b.ReportMetric(float64(steps[len(steps)/2].Microseconds()), "µs-median/step")
			b.ReportMetric(float64(steps[len(steps)*99/100].Microseconds()), "µs-p99/step")
			b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "MiB-heap-loaded")
		})
	}
}

var (
	realOnce sync.Once
	realEng  *engine.Engine
	realErr  error
)

// realTurns is how long the real conversation of the benchmark is.
const realTurns = 1000

// openReal opens the real conversation (see BenchmarkScrubStep) at its
// newest checkpoint.
func openReal(tb testing.TB, w, h int) *Model {
	realOnce.Do(func() {
		st := memory.New()
		if _, realErr = bench.Run(context.Background(), st, "memory", bench.Options{Turns: realTurns, Thread: "real", Reads: 1}, nil); realErr != nil {
			return
		}
		realEng, realErr = ticket.NewEngine(st, ticket.NewMock())
	})
	if realErr != nil {
		tb.Fatal(realErr)
	}
	m := New(context.Background(), depsFor(realEng), Settings{Thread: "real"})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	runSync(m, m.Init())
	if m.tree.len() < realTurns || m.cur == nil {
		tb.Fatalf("the real thread did not load: %d checkpoints, detail %v", m.tree.len(), m.cur != nil)
	}
	return m
}
