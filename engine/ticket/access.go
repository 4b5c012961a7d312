package ticket

// Access to sources (issue 36, seed 002's recovery: "check the user still
// has rights to the source"): before a resume, an answer or a replay runs
// the pending tasks, each executor's source (the record its subtask will
// read) must not be withdrawn (SourceAccess); a tool call that would
// read a withdrawn source is not made either.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"rewind/engine"
)

// checkAccess is the graph's access check (engine.OnAccess).
func (d *deps) checkAccess(ctx context.Context, thread string, at int64, tasks []engine.Task) error {
	acc, ok := d.sources.(SourceAccess)
	if !ok {
		return nil
	}
	type read struct{ task, subtask, source string }
	var reads []read
	for _, t := range tasks {
		var a ExecutorArgs
		if t.Node != NodeExecutor || json.Unmarshal(t.Args, &a) != nil {
			continue
		}
		if src := plannedSource(a.Task); src != "" {
			reads = append(reads, read{t.ID, a.Task.ID, src})
		}
	}
	if len(reads) == 0 {
		return nil
	}
	withdrawn, err := acc.Withdrawn(ctx)
	if err != nil {
		return fmt.Errorf("check access to the sources of the pending work: %w", err)
	}
	for _, r := range reads {
		if withdrawn[r.source] {
			return engine.Fixable(thread, at, fmt.Errorf("pending task %s (subtask %s) would read %s: %w; nothing was run",
				r.task, r.subtask, r.source, engine.ErrAccessWithdrawn),
				engine.Fix{Action: engine.FixRestoreAccess, Thread: thread, Source: r.source}, engine.ForkFix(thread, 0))
		}
	}
	return nil
}

// plannedSource is the record subtask st will read: the one it read
// before when it is sent back, else its topic's tool's record of the
// order its goal names; "" when that is not known before it runs.
func plannedSource(st Subtask) string {
	if st.Source != "" {
		return st.Source
	}
	i := slices.IndexFunc(topics, func(t topic) bool { return t.name == st.Topic })
	ref := orderRef().FindString(st.Goal)
	if i < 0 || ref == "" {
		return ""
	}
	return SourceOf(topics[i].tool, ref)
}

// withdrawnRead says why a tool call may not read source ("" when it
// may).
func (d *deps) withdrawnRead(ctx context.Context, source string) (string, error) {
	acc, ok := d.sources.(SourceAccess)
	if !ok {
		return "", nil
	}
	withdrawn, err := acc.Withdrawn(ctx)
	if err != nil {
		return "", fmt.Errorf("executor: check access to %s: %w", source, err)
	}
	if withdrawn[source] {
		return fmt.Sprintf("not run: access to %s was withdrawn; answer without it", source), nil
	}
	return "", nil
}
