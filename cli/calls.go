package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/model/openai"
	"rewind/engine/ticket"
	"rewind/tui/termtext"
)

// partOrder is how a request's parts are listed.
var partOrder = []string{model.PartInstructions, model.PartSummary, model.PartFacts, model.PartTail, model.PartRounds}

// printCalls prints what the model saw in each call the tasks that made
// checkpoint id made (role "" for every role): the request as sent, built
// again from the parent checkpoint and checked against its stored hash,
// its tokens by part against the context window, and the answer.
func printCalls(ctx context.Context, e *engine.Engine, thread string, id int64, role string, asJSON bool, out io.Writer) error {
	if g := e.Graph().Name; g != ticket.GraphName {
		// ticket.Calls builds the ticket's requests: on another graph each
		// would read "NOT the one sent", with the ticket's tools.
		at := ""
		if id != 0 {
			at = " " + strconv.FormatInt(id, 10)
		}
		return usagef("show --calls builds the ticket graph's requests again, and thread %s runs graph %s: its model calls as stored are in `rewind events %s%s` (model.called)", idText(thread), idText(g), idText(thread), at)
	}
	if id == 0 {
		cp, err := e.Latest(ctx, thread)
		if err != nil {
			return err
		}
		id = cp.ID
	}
	calls, err := ticket.Calls(ctx, e, thread, id)
	if err != nil {
		return err
	}
	if role != "" {
		calls = slices.DeleteFunc(calls, func(c ticket.Call) bool { return c.Role != role })
	}
	window := openai.WindowFromEnv(os.Getenv)
	if asJSON {
		return writeJSON(out, map[string]any{"thread": thread, "checkpoint": id, "window": window, "calls": calls})
	}
	if len(calls) == 0 {
		what := "no model calls"
		if role != "" {
			what = "no " + role + " calls"
		}
		fmt.Fprintf(out, "@%d of %s: %s (an input, an update or a step without a model call; the calls of a superstep are shown at the checkpoint it made: try @%d)\n", id, idText(thread), what, id+1)
		return nil
	}
	for i, c := range calls {
		if i > 0 {
			fmt.Fprintln(out)
		}
		printCall(out, id, c, window)
	}
	return nil
}

func printCall(out io.Writer, id int64, c ticket.Call, window int) {
	task := c.Task
	if len(task) > 8 {
		task = task[:8]
	}
	fmt.Fprintf(out, "── @%d %s call %d (task %s) ", id, termtext.Line(c.Role), c.Round, termtext.Line(task))
	switch {
	case c.Exact:
		fmt.Fprintf(out, "· request %s, exactly as sent\n", c.Hash)
	case c.Hash == "":
		fmt.Fprintf(out, "· request built again from @%s's parent (stored before requests were hashed: not checked)\n", strconv.FormatInt(id, 10))
	default:
		fmt.Fprintf(out, "· request built again (%s) is NOT the one sent (%s): this rewind builds it differently from the one that ran\n", c.Rebuilt, c.Hash)
	}
	total := 0
	var parts []string
	for _, p := range partOrder {
		if n := c.Parts[p]; n > 0 {
			total += n
			parts = append(parts, fmt.Sprintf("%s %d", p, n))
		}
	}
	fmt.Fprintf(out, "   tokens ~%d of a %d window (%d%%): %s", total, window, total*100/max(window, 1), strings.Join(parts, " · "))
	if r := c.Reported; r.PromptTokens > 0 {
		fmt.Fprintf(out, "; the model counted %d in, %d out", r.PromptTokens, r.CompletionTokens)
	}
	fmt.Fprintln(out)
	if c.Error != "" {
		fmt.Fprintf(out, "   error: %s\n", termtext.Line(c.Error))
	}
	for _, t := range c.Request.Tools {
		fmt.Fprintf(out, "   tool %s: %s\n", termtext.Line(t.Name), termtext.Line(t.Description))
	}
	if c.Request.JSON != nil {
		fmt.Fprintf(out, "   answer schema %s\n", termtext.Line(c.Request.JSON.Name))
	}
	for _, m := range c.Request.Messages {
		head := "[" + m.Role
		if m.ToolCallID != "" {
			head += " answering " + m.ToolCallID
		}
		head += " · " + m.Part + "]"
		fmt.Fprintln(out, termtext.Line(head))
		if m.Content != "" {
			fmt.Fprintln(out, indent(termtext.Text(m.Content)))
		}
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(out, "  → %s %s(%s)\n", termtext.Line(tc.ID), termtext.Line(tc.Name), termtext.Line(tc.Arguments))
		}
	}
	fmt.Fprintln(out, "[answer]")
	if c.Answer != "" {
		fmt.Fprintln(out, indent(termtext.Text(c.Answer)))
	}
	for _, tc := range c.ToolCalls {
		fmt.Fprintf(out, "  → %s %s(%s)\n", termtext.Line(tc.ID), termtext.Line(tc.Name), termtext.Line(tc.Arguments))
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
