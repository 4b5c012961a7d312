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
func (c *runControl) askReplay(at runAt) (runAsk, tea.Cmd) {
	id, n := at.cursor, at.cur
	if c.sess.thread == "" || n == nil {
		return sayErr("no checkpoint under the cursor to replay from"), nil
	}
	if _, ok := c.sess.deps.Runner.(Replayer); !ok {
		return sayErr("this runner cannot replay"), nil
	}
	if c.busy() {
		return sayErr("a run is under way: wait for it, or stop it with x"), nil
	}
	if n.pending == 0 {
		return sayErr(fmt.Sprintf("nothing to replay at @%s: it ends a turn with no tasks due; replay an earlier checkpoint of the turn (its input checkpoint runs the whole turn again), or f forks it with new input", id)), nil
	}
	q := fmt.Sprintf("Replay from @%s? A new branch starts at @%s and runs its due tasks (%s) again, with no new input. Nothing is deleted: the old branch stays.", id, id, n.next)
	return runAsk{dialog: &confirmDialog{title: fmt.Sprintf("Replay from @%s", id), question: q, keys: newConfirmKeys(), onYes: func() tea.Cmd { return reply(c.startReplay(id)) }}}, nil
}

// startReplay launches the replay in a Cmd; the new branch is followed as a
// fork's is.
func (c *runControl) startReplay(id string) (runAsk, tea.Cmd) {
	rp, ok := c.sess.deps.Runner.(Replayer)
	if !ok {
		return sayErr("this runner cannot replay"), nil
	}
	if c.busy() {
		return sayErr("a run is under way: wait for it, or stop it with x"), nil
	}
	c.live.begin("replay")
	ctx, thread, rs, gen := c.sess.ctx, c.sess.thread, c.settings(), c.sess.gen
	start := func() tea.Msg {
		r, err := rp.Replay(ctx, thread, num(id), rs)
		return runStartedMsg{gen: gen, thread: thread, kind: "replay", run: r, err: err, rs: rs}
	}
	return runAsk{clear: true, relive: true, spin: true}, start
}
