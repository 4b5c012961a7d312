package tui

import (
	"context"
	"fmt"
	"strconv"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine"
	"rewind/engine/worker"
)

// Replay runs the tasks due at a checkpoint again on a new branch, with no
// new input (Engine.Replay, the worker op "replay"): LangGraph Studio's
// re-run from an older checkpoint.

// Replayer is a Runner that can replay from a checkpoint.
type Replayer interface {
	Replay(ctx context.Context, thread string, checkpoint int64, rs RunSettings) (RunHandle, error)
}

// Replay runs Engine.Replay in this process.
func (r *localRunner) Replay(ctx context.Context, thread string, checkpoint int64, rs RunSettings) (RunHandle, error) {
	return launch(ctx, rs, func(ctx context.Context, cfg engine.RunConfig) (engine.Result, error) {
		return r.e.Replay(ctx, thread, checkpoint, cfg)
	}), nil
}

// Replay runs `rewind worker replay T CP` in a new worker process.
func (w *workerRunner) Replay(ctx context.Context, thread string, checkpoint int64, rs RunSettings) (RunHandle, error) {
	return w.start(ctx, w.args(worker.OpReplay, rs, nil, thread, strconv.FormatInt(checkpoint, 10)))
}

// askReplay asks before replaying from the checkpoint under the cursor; a
// checkpoint with nothing due says why on the status line.
func (m *Model) askReplay() tea.Cmd {
	id := m.timeline.tree.cursor
	n := m.timeline.tree.nodes[id]
	if m.sess.thread == "" || n == nil {
		return m.setFlash("no checkpoint under the cursor to replay from", true)
	}
	if _, ok := m.sess.deps.Runner.(Replayer); !ok {
		return m.setFlash("this runner cannot replay", true)
	}
	if m.busy() {
		return m.setFlash("a run is under way: wait for it, or stop it with x", true)
	}
	if n.pending == 0 {
		return m.setFlash(fmt.Sprintf("nothing to replay at @%s: it ends a turn with no tasks due; replay an earlier checkpoint of the turn (its input checkpoint runs the whole turn again), or f forks it with new input", id), true)
	}
	q := fmt.Sprintf("Replay from @%s? A new branch starts at @%s and runs its due tasks (%s) again, with no new input. Nothing is deleted: the old branch stays.", id, id, n.next)
	m.openDialog(&confirmDialog{title: fmt.Sprintf("Replay from @%s", id), question: q, keys: newConfirmKeys(), onYes: func() tea.Cmd { return m.startReplay(id) }})
	return nil
}

// startReplay launches the replay in a Cmd; the new branch is followed as a
// fork's is.
func (m *Model) startReplay(id string) tea.Cmd {
	rp, ok := m.sess.deps.Runner.(Replayer)
	if !ok {
		return m.setFlash("this runner cannot replay", true)
	}
	if m.busy() {
		return m.setFlash("a run is under way: wait for it, or stop it with x", true)
	}
	m.live.begin("replay")
	m.clearFlash()
	ctx, thread, rs, gen := m.sess.ctx, m.sess.thread, m.runSettings(), m.sess.gen
	m.refreshLive()
	start := func() tea.Msg {
		r, err := rp.Replay(ctx, thread, num(id), rs)
		return runStartedMsg{gen: gen, thread: thread, kind: "replay", run: r, err: err, rs: rs}
	}
	return tea.Batch(start, m.spin.Tick)
}
