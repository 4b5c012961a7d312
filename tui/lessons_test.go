package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"rewind/engine"
	"rewind/themes"
)

// testLessons are lessons as `rewind demo` passes them; "fork" opens the
// seeded thread "t".
var testLessons = []Lesson{
	{Name: "summary", Title: "The summary vs the verbatim tail", Thread: "s",
		Proves: "compaction keeps each message's #index and speaker, and pins facts verbatim",
		Steps:  []LessonStep{{Do: "2 (State tab), then h/l along the timeline", See: "the summary apart from the tail"}}},
	{Name: "fork", Title: "Fork with and without a checkpoint id", Thread: "t",
		Proves: "a fork from a named checkpoint is a new branch and leaves the head alone; a new input without the id lands on the head",
		Steps: []LessonStep{
			{Do: "open t, [ and ] to switch branches", See: "two branches from @2: the original turn and the fork's sentence, both whole"},
			{Do: "f on @2 and type a new sentence", See: "a third branch appears; nothing is deleted"},
			{Do: "open t-wrong", See: "one straight chain: the second sentence went on top of the head"},
		}},
	{Name: "kill", Title: "Kill points", Thread: "k", KillsWorkers: true,
		Proves: "at every seed kill point a resume redoes only what was lost",
		Steps:  []LessonStep{{Do: "K, mid-fanout, i and a message", See: "the worker dies"}}},
}

// lessonPrepare seeds thread "t" on e as the fork lesson's run would, and
// says so.
func lessonPrepare(t *testing.T, e *engine.Engine) PrepareFunc {
	return func(ctx context.Context, name string, say func(string)) (LessonVerdict, error) {
		if name != "fork" {
			return LessonVerdict{}, fmt.Errorf("lesson %s is not in this test", name)
		}
		say("forking at @2")
		seed(t, e, "t")
		return LessonVerdict{Line: "PASS: with @2: 2 branches from @2, the main head keeps 1 request", Passed: true}, nil
	}
}

// lessonSettled quits once the picker is drawn, or once the lesson's
// thread shows the checkpoint under the cursor. Once asked
// (quitWhenSettled), it checks after every message, as settling does:
// a timer's poll drew a frame for nothing every 5 ms.
type lessonSettled struct {
	*Model
	q *quitWhenSettled // the quit asked for; nil before it, and once quitting
}

// hideScript presses s until the script panel hides (it turns its pages
// first: how many depends on the size), running what each press asks.
type hideScript struct{}

// lessonUnsettled says what the lesson's screen still waits for ("" when
// settled).
func lessonUnsettled(m *Model) string {
	var why []string
	for _, c := range []struct {
		busy bool
		name string
	}{
		{m.lessons.preparing != "", "the lesson being prepared"},
		{m.screen == screenLessons && m.w == 0, "the picker's size"},
		{m.screen != screenLessons && (m.screen != screenThread || m.script == nil), "the lesson's thread and script"},
		{m.screen == screenThread && m.timeline.loading, "timeline page"},
		{m.screen == screenThread && m.live.headLoading != 0, "head"},
		{m.screen == screenThread && m.live.costsLoading, "costs"},
		{m.screen == screenThread && (m.cur == nil || m.cur.id != m.timeline.tree.cursor), "cursor checkpoint"},
	} {
		if c.busy {
			why = append(why, c.name)
		}
	}
	return strings.Join(why, ", ")
}

func (s lessonSettled) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	q, asked := msg.(quitWhenSettled)
	var cmd tea.Cmd
	switch _, hide := msg.(hideScript); {
	case asked && q.late && s.q == nil:
		return s, nil // settled and quitting already
	case asked && !q.late:
		s.q = &q
		cmd = settling{}.deadline()
	case hide:
		var cmds []tea.Cmd
		for i := 0; i < 5 && !s.Model.script.hidden; i++ {
			_, c := s.Model.Update(keyMsg("s"))
			cmds = append(cmds, c)
		}
		cmd = tea.Batch(cmds...)
	case !asked:
		_, cmd = s.Model.Update(msg)
	}
	if s.q == nil {
		return s, cmd
	}
	cmd, done := s.q.step(s.Model, lessonUnsettled(s.Model), "the lesson's screen", asked && q.late, cmd)
	if done {
		s.q = nil
	}
	return s, cmd
}

// TestLessonGolden: the lesson picker, and a lesson's thread with its
// script beside the panes (120 columns) or over them (80), and hidden (s).
// Rewrite with `go test ./tui -run TestLessonGolden -update`.
func TestLessonGolden(t *testing.T) {
	screens := []struct {
		name   string
		lesson string // Settings.Lesson: prepared at start
		keys   []string
		wait   []string
		poke   func(m *Model)
		only   [2]int // only at this size
		hide   bool   // s until the script hides (hideScript)
	}{
		{"picker", "", []string{"down"}, []string{"Lessons · 3", "✝ kills workers", "▸ fork", "enter prepare"}, nil, [2]int{}, false},
		{"preparing", "", nil, []string{"preparing fork…", "forking at @2"}, func(m *Model) {
			m.lessons.preparing, m.lessons.progress = "fork", []string{"running the lesson headless", "forking at @2"}
		}, [2]int{}, false},
		{"script", "fork", nil, []string{"Lesson fork", "1. open t", "PASS: with @2"}, nil, [2]int{}, false},
		{"script-hidden", "fork", nil, []string{"Conversation"}, nil, [2]int{}, true},
		{"script-page2", "fork", []string{"s"}, []string{"Lesson fork 2/2", "3. open t-wrong", "s hides this panel", "PASS: with @2"}, nil, [2]int{80, 24}, false},
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, sc := range screens {
			if sc.only != [2]int{} && sc.only != size {
				continue
			}
			t.Run(fmt.Sprintf("%dx%d/%s", size[0], size[1], sc.name), func(t *testing.T) {
				e := newEngine(t)
				m := New(context.Background(), depsFor(e), Settings{Theme: themes.Or(themes.Dark), Lessons: testLessons, Prepare: lessonPrepare(t, e), Lesson: sc.lesson})
				tm := teatest.NewTestModel(t, lessonSettled{Model: m}, teatest.WithInitialTermSize(size[0], size[1]))
				if sc.lesson != "" {
					waitScreen(t, tm, "Lesson "+sc.lesson, "at @16")
				} else {
					waitScreen(t, tm, "Lessons · 3")
				}
				for _, k := range sc.keys {
					tm.Send(keyMsg(k))
				}
				if sc.hide {
					tm.Send(hideScript{})
				}
				tm.Send(quitWhenSettled{poke: sc.poke, t: t, by: time.Now().Add(45 * time.Second)})
				final := tm.FinalModel(t, teatest.WithFinalTimeout(60*time.Second)).(lessonSettled).Model
				view := final.View()
				for _, want := range sc.wait {
					if !strings.Contains(view, want) {
						t.Fatalf("the final view lacks %q:\n%s", want, view)
					}
				}
				if sc.name == "script-hidden" && strings.Contains(view, "s hides") {
					t.Fatalf("s did not hide the script:\n%s", view)
				}
				assertFits(t, view, size, sc.name)
				teatest.RequireEqualOutput(t, []byte(view))
			})
		}
	}
}

// Choosing a lesson in the picker prepares it (its progress shown), then
// opens its thread with the script; a lesson that fails to prepare stays
// in the picker and says why.
func TestLessonPickerPreparesAndOpens(t *testing.T) {
	e := newEngine(t)
	h := newHarnessDeps(t, depsFor(e), Settings{Lessons: testLessons, Prepare: lessonPrepare(t, e)}, 120, 40)
	if !h.contains("Lessons · 3") {
		t.Fatalf("rewind demo starts on the picker:\n%s", h.screen())
	}
	h.dispatch(tea.MouseMsg{Action: tea.MouseActionPress, Button: tea.MouseButtonWheelDown, X: 10, Y: 5})
	if !h.contains("▸ fork") {
		t.Fatalf("the wheel did not move the picker's cursor:\n%s", h.screen())
	}
	h.dispatch(tea.MouseMsg{Action: tea.MouseActionPress, Button: tea.MouseButtonWheelUp, X: 10, Y: 5})
	if !h.contains("▸ summary") || h.m.sess.thread != "" {
		t.Fatalf("the wheel on the picker moves its cursor only:\n%s", h.screen())
	}
	h.key("enter") // summary: this test's prepare refuses it
	h.until("the failure on the status line", func() bool { return h.contains("lesson summary is not in this test") })
	if h.m.screen != screenLessons || h.m.script != nil {
		t.Fatalf("a failed lesson left the picker:\n%s", h.screen())
	}
	h.key("j", "enter")
	h.until("the lesson's thread", func() bool { return h.at(16) && h.contains("Lesson fork") })
	if !h.contains("f on @2 and type a new sentence") || !h.contains("PASS: with @2") {
		t.Fatalf("the script panel lacks its steps or verdict:\n%s", h.screen())
	}
	found := false
	for _, e := range h.m.status.log {
		found = found || strings.Contains(e.text, "forking at @2") || strings.Contains(e.text, "lesson fork: PASS")
	}
	if !found {
		t.Fatalf("the status log lacks the lesson's verdict: %+v", h.m.status.log)
	}
	h.key("s")
	if h.contains("Lesson fork") {
		t.Fatalf("s left the script shown:\n%s", h.screen())
	}
	h.key("s")
	if !h.contains("Lesson fork") {
		t.Fatalf("s again did not bring the script back:\n%s", h.screen())
	}
}

// Quitting while a lesson is being prepared cancels its run and waits for
// it: a lesson's workers are not left running behind the TUI.
func TestQuitCancelsALessonBeingPrepared(t *testing.T) {
	e := newEngine(t)
	started, cancelled := make(chan struct{}), make(chan struct{})
	prepare := func(ctx context.Context, name string, say func(string)) (LessonVerdict, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return LessonVerdict{}, ctx.Err()
	}
	h := newHarnessDeps(t, depsFor(e), Settings{Lessons: testLessons, Prepare: prepare, Lesson: "fork"}, 120, 40)
	<-started
	if !h.contains("preparing fork…") {
		t.Fatalf("the picker does not say the lesson is being prepared:\n%s", h.screen())
	}
	h.m.Shutdown(time.Minute)
	select {
	case <-cancelled:
	default:
		t.Fatal("Shutdown returned with the lesson's run still under way")
	}
}

// A lesson whose verdict names a checkpoint opens on it, not on the
// thread's newest (the resume lesson: selftest forks its thread after the
// resume the script shows).
func TestLessonOpensOnItsCheckpoint(t *testing.T) {
	e := newEngine(t)
	prepare := func(ctx context.Context, name string, say func(string)) (LessonVerdict, error) {
		seed(t, e, "t")
		return LessonVerdict{Line: "PASS: the first turn", Passed: true, At: 8}, nil
	}
	h := newHarness(t, e, Settings{Lessons: testLessons, Prepare: prepare, Lesson: "fork"}, 120, 40)
	h.until("the lesson's checkpoint, @8 (the newest is @16)", func() bool { return h.at(8) && h.contains("Lesson fork") })
}
