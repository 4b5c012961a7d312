package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/engine"
	"rewind/engine/model/openai"
	"rewind/engine/ticket"
	"rewind/store/browse"
	"rewind/tui/termtext"
)

func newShowCmd() *cobra.Command {
	var store, message, ns, calls, graph string
	var asJSON bool
	c := &cobra.Command{
		Use:   "show T [CHECKPOINT]",
		Short: "state, pending tasks and writes at a checkpoint (default: the latest)",
		Long: `The state at a checkpoint of thread T (default: the latest): summary,
verbatim tail, attachments, subtasks, budget, pending tasks with their
arguments, the writes that made the checkpoint (by task) and what it stored,
and the stored writes of a half-finished superstep.

With --message N: original message #N of that checkpoint's branch, even long
after compaction folded it into the summary.

With --calls: what each model saw in the calls that made the checkpoint
(every role, or the one named: --calls critic): the request as it was sent
(system prompt, summary, the verbatim tail as chat messages with each tool
call joined to its result, the task), built again from the parent
checkpoint and checked against the hash stored with the call; its tokens by
part against the context window; the tools offered; and the answer. The
API key is never part of it.

On a LangGraph database (read-only; a checkpoint is its UUID, --ns picks a
subgraph's chain): the conversation with each tool call joined to its
result, every channel, the tasks due (queued Sends with their arguments)
and the writes stored for the superstep from it, errors and interrupts
named.`,
		Example: `  rewind show ticket-1
  rewind show ticket-1 4 --json
  rewind show ticket-1 --message 12
  rewind show ticket-1 @4 --calls critic
  rewind show t-main 1f0a… --store sqlite:checkpoints.db`,
		Args: between(1, 3),
		RunE: func(c *cobra.Command, args []string) error {
			ctx, out, thread := c.Context(), c.OutOrStdout(), args[0]
			ctx, err := forThread(ctx, thread, givenGraph(c, graph))
			if err != nil {
				return err
			}
			n, err := messageIndex(message)
			if err != nil {
				return err
			}
			lg := func(src browse.Source) error {
				at := ""
				if len(args) == 2 {
					at = strings.TrimPrefix(args[1], "@")
				}
				if n >= 0 {
					return lgMessage(ctx, src, thread, ns, at, n, asJSON, out)
				}
				return lgShow(ctx, src, thread, ns, at, asJSON, out)
			}
			// --calls takes its role as a flag value or as the word after
			// the checkpoint: show T @4 --calls critic, show T --calls critic.
			if c.Flags().Changed("calls") && calls == "all" {
				if last := args[len(args)-1]; len(args) > 1 && slices.Contains(openai.Roles, last) {
					calls, args = last, args[:len(args)-1]
				}
			}
			if len(args) > 2 {
				return usagef("show: %q is one word too many: give T and a checkpoint (and with --calls, a role: %s)", named(args[2]), strings.Join(openai.Roles, ", "))
			}
			return withSource(ctx, store, ns, lg, func(ctx context.Context) error {
				id, err := optCheckpoint(args)
				if err != nil {
					return err
				}
				if n >= 0 {
					return withReader(ctx, store, func(e *engine.Engine) error { return printMessage(ctx, e, thread, id, n, asJSON, out) })
				}
				if c.Flags().Changed("calls") {
					role := calls
					if role == "all" {
						role = ""
					}
					if role != "" && !slices.Contains(openai.Roles, role) {
						return usagef("show: --calls %q is not a role: name one of %s, or give --calls alone for every call", named(role), strings.Join(openai.Roles, ", "))
					}
					return withReader(ctx, store, func(e *engine.Engine) error { return printCalls(ctx, e, thread, id, role, asJSON, out) })
				}
				a, err := openReader(ctx, store)
				if err != nil {
					return err
				}
				defer a.Close()
				return printShow(ctx, a.Engine, a.Sources, thread, id, asJSON, out)
			})
		},
	}
	addStore(c, &store)
	addGraphFlag(c, &graph)
	addJSON(c, &asJSON)
	c.Flags().StringVar(&message, "message", "", "print original message #`N` instead")
	c.Flags().StringVar(&calls, "calls", "", "print what the model saw in each call that made the checkpoint (`ROLE`: only that role's; alone: all)")
	c.Flags().Lookup("calls").NoOptDefVal = "all"
	addNS(c, &ns)
	return c
}

func printShow(ctx context.Context, e *engine.Engine, src ticket.Sources, thread string, id int64, asJSON bool, out io.Writer) error {
	var cp engine.Checkpoint
	sealed, err := unlessSealed(e, func() (err error) {
		cp, err = latestOr(ctx, e, thread, id)
		return err
	})
	if sealed != nil {
		return printSealedShow(ctx, e, thread, id, *sealed, asJSON, out)
	}
	if err != nil {
		return err
	}
	s, err := ticket.Decode(cp.Values)
	if err != nil {
		return fmt.Errorf("checkpoint %d of thread %q: %w", cp.ID, named(thread), err)
	}
	writes, err := e.PendingWrites(ctx, thread, cp.ID)
	if err != nil {
		return err
	}
	costs, err := e.CostsAt(ctx, thread, cp.ID)
	if err != nil {
		return err
	}
	// What the records the thread read are at now, to tell a stale read.
	now, err := src.Versions(ctx)
	if err != nil {
		return err
	}
	current := map[string]int{}
	for id := range s.SourceVersions {
		current[id] = ticket.BaseVersion
		if v, ok := now[id]; ok {
			current[id] = v
		}
	}
	run := e.Graph().StatusOf(cp)
	if asJSON {
		return writeJSON(out, map[string]any{"checkpoint": cp, "runStatus": run, "state": s, "pendingWrites": writes, "sourcesNow": current, "costs": costs})
	}
	format, err := showFormat(ctx, e, thread, cp)
	if err != nil {
		return err
	}
	fmt.Fprint(out, checkpointHead(readChain{Chain: browse.Chain{Thread: thread}, rewind: true}, engine.Listing(thread, cp), format))
	fmt.Fprintf(out, "run %s as of @%d", run.Status, run.Checkpoint)
	if run.Reason != "" {
		fmt.Fprintf(out, ": %s", termtext.Line(reasonWithFixes(run.Reason, run.Fix)))
	}
	if run.Status == engine.RunRunning {
		// A killed worker cannot record its death.
		fmt.Fprintf(out, " (if no process runs it any more, `rewind resume %s` carries it on)", idText(thread))
	}
	fmt.Fprintln(out)
	if s.Summary != nil {
		fmt.Fprintf(out, "\nSUMMARY of #%d–#%d (history v%d, %s)\n", s.Summary.From, s.Summary.To, s.Summary.HistoryVersion, termtext.Line(s.Summary.Trigger))
		for _, line := range strings.Split(s.Summary.Text, "\n") {
			fmt.Fprintf(out, "  %s\n", termtext.Line(line))
		}
	}
	fmt.Fprintf(out, "\nMESSAGES (%d verbatim)\n", len(s.Messages))
	for _, m := range s.Messages {
		read := ""
		if m.Source != nil {
			read = fmt.Sprintf(" [read %s v%d]", termtext.Line(m.Source.ID), m.Source.Version)
		}
		fmt.Fprintf(out, "  #%-3d %s: %s%s\n", m.Index, termtext.Line(m.Speaker), termtext.Text(m.Content), read)
	}
	if len(s.Attachments) > 0 {
		fmt.Fprintln(out, "\nATTACHMENTS")
		for _, a := range s.Attachments {
			fmt.Fprintf(out, "  %s %s %s %s\n", idText(a.ID), termtext.Line(a.Kind), termtext.Line(a.Ref), termtext.Line(a.Caption))
		}
	}
	if len(s.Subtasks) > 0 {
		fmt.Fprintln(out, "\nSUBTASKS")
		for _, st := range s.Subtasks {
			read := ""
			if st.Source != "" {
				read = fmt.Sprintf("  (read %s v%d)", termtext.Line(st.Source), st.SourceVersion)
			}
			fmt.Fprintf(out, "  %-16s %-18s tools %d  %s%s\n", idText(st.ID), termtext.Line(st.Status), st.ToolCalls, termtext.Line(st.Goal), read)
		}
	}
	if len(s.SourceVersions) > 0 {
		fmt.Fprintln(out, "\nSOURCE VERSIONS (read this turn · now)")
		for _, id := range sortedKeys(s.SourceVersions) {
			v, cur := s.SourceVersions[id], current[id]
			note := "unchanged"
			if cur != v {
				note = fmt.Sprintf("changed since: now v%d", cur)
			}
			fmt.Fprintf(out, "  %-28s v%d · %s\n", idText(id), v, note)
		}
	}
	if len(s.Operations) > 0 {
		fmt.Fprintln(out, "\nOPERATIONS")
		for _, id := range sortedKeys(s.Operations) {
			op := s.Operations[id]
			fmt.Fprintf(out, "  %s %s %s", idText(id), termtext.Line(op.Kind), termtext.Line(op.Status))
			if len(op.Sources) > 0 {
				parts := make([]string, 0, len(op.Sources))
				for _, sid := range sortedKeys(op.Sources) {
					parts = append(parts, fmt.Sprintf("%s v%d", termtext.Line(sid), op.Sources[sid]))
				}
				fmt.Fprintf(out, " · built from %s", strings.Join(parts, ", "))
			}
			if op.Result != "" {
				fmt.Fprintf(out, " · %s", termtext.Line(op.Result))
			}
			if op.EditedBy != "" {
				fmt.Fprintf(out, " · edited by %s before approval", termtext.Line(op.EditedBy))
			}
			if op.RedraftedBy != "" {
				fmt.Fprintf(out, " · redrafted as %s", idText(op.RedraftedBy))
			}
			fmt.Fprintln(out)
			if v, ok := s.VerificationResults[id]; ok {
				verdict := "verified"
				if !v.OK {
					verdict = "verification FAILED: " + strings.Join(v.Problems, "; ")
				}
				fmt.Fprintf(out, "    %s (%s)\n", termtext.Line(verdict), termtext.Line(strings.Join(v.Checks, "; ")))
			}
		}
	}
	printStateLine(out, e.Graph(), cp, s, thread)
	printCosts(out, costs)
	if len(cp.Tasks) > 0 {
		fmt.Fprintf(out, "\nPENDING TASKS (%d)\n", len(cp.Tasks))
		for _, t := range cp.Tasks {
			fmt.Fprintf(out, "  %s %s %s\n", idText(t.ID), termtext.Line(t.Node), termtext.Line(string(t.Args)))
		}
	}
	if len(cp.Applied) > 0 {
		fmt.Fprintf(out, "\nWRITES that made this checkpoint (%s stored)\n", byteSize(cp.Bytes))
		for _, g := range cp.Applied {
			chs := make([]string, len(g.Writes))
			for i, x := range g.Writes {
				chs[i] = x.Channel
			}
			who := g.Node
			if g.Task != "" {
				who = g.Task + " " + g.Node
			}
			fmt.Fprintf(out, "  %s → %s\n", termtext.Line(who), termtext.Line(strings.Join(chs, ", ")))
		}
	}
	if len(writes) > 0 {
		fmt.Fprintf(out, "\nSTORED WRITES of the pending superstep (%s done, reused on resume)\n", count(len(writes), "task"))
		for _, w := range writes {
			chs := make([]string, len(w.Writes))
			for i, x := range w.Writes {
				chs[i] = x.Channel
			}
			fmt.Fprintf(out, "  %s %s → %s\n", idText(w.Task), termtext.Line(w.Node), termtext.Line(strings.Join(chs, ", ")))
		}
	}
	return nil
}

// shownTurns is how many of the newest turns show lists one by one.
const shownTurns = 8

// printCosts prints the thread's tokens by role (each call once, all
// branches), the shown checkpoint's branch and its last turn by role, then
// the newest turns.
func printCosts(out io.Writer, c engine.Costs) {
	fmt.Fprintf(out, "\nTOKENS of the thread, all branches (each call once): %s in / %s out\n", termtext.Count(c.Total.PromptTokens), termtext.Count(c.Total.CompletionTokens))
	printRoles(out, "  ", c.Roles)
	fmt.Fprintf(out, "  this branch (root to @%d): %s in / %s out\n", c.Branch.Head, termtext.Count(c.Branch.Total.PromptTokens), termtext.Count(c.Branch.Total.CompletionTokens))
	if t := c.LastTurn; t != nil {
		fmt.Fprintf(out, "  last turn (from @%d): %s in / %s out\n", t.Start, termtext.Count(t.Total.PromptTokens), termtext.Count(t.Total.CompletionTokens))
		printRoles(out, "    ", t.Roles)
	}
	turns, earlier := c.Turns, c.EarlierTurns
	if len(turns) > shownTurns {
		earlier += len(turns) - shownTurns
		turns = turns[len(turns)-shownTurns:]
	}
	if earlier > 0 {
		fmt.Fprintf(out, "  … %d earlier turn(s)\n", earlier)
	}
	for _, t := range turns {
		fmt.Fprintf(out, "  turn @%-5d %8s in / %7s out\n", t.Start, termtext.Count(t.Total.PromptTokens), termtext.Count(t.Total.CompletionTokens))
	}
}

// printRoles prints tokens by role, in the order a turn calls them.
func printRoles(out io.Writer, indent string, byRole map[string]engine.RoleUsage) {
	roles := make([]string, 0, len(byRole))
	for r := range byRole {
		roles = append(roles, r)
	}
	sort.Slice(roles, func(i, j int) bool { return roleOrder(roles[i]) < roleOrder(roles[j]) })
	for _, r := range roles {
		u := byRole[r]
		fmt.Fprintf(out, "%s%-10s %3s call(s) %8s in / %7s out\n", indent, termtext.Line(r), termtext.Count(u.Calls), termtext.Count(u.PromptTokens), termtext.Count(u.CompletionTokens))
	}
}

// roleOrder lists the roles in the order a turn calls them.
func roleOrder(role string) string {
	if i := slices.Index(openai.Roles, role); i >= 0 {
		return fmt.Sprint(i)
	}
	return "9" + role
}

// printMessage prints an original message, even one compaction folded into
// the summary long ago.
func printMessage(ctx context.Context, e *engine.Engine, thread string, at, index int64, asJSON bool, out io.Writer) error {
	m, err := e.Message(ctx, thread, at, index)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(out, m)
	}
	var msg ticket.Message
	if err := json.Unmarshal(m.Body, &msg); err != nil {
		return fmt.Errorf("message #%d of thread %q: %w", index, named(thread), err)
	}
	fmt.Fprintf(out, "#%d %s (%s, first stored at @%d, %s)\n", m.Index, termtext.Line(msg.Speaker), termtext.Line(msg.Role), m.Checkpoint, m.CreatedAt.Local().Format("2006-01-02 15:04:05"))
	if msg.ToolCall != nil {
		fmt.Fprintf(out, "tool call %s %s(%s)\n", idText(msg.ToolCall.ID), termtext.Line(msg.ToolCall.Name), termtext.Line(string(msg.ToolCall.Args)))
	}
	if msg.ToolCallID != "" {
		fmt.Fprintf(out, "result of %s\n", idText(msg.ToolCallID))
	}
	fmt.Fprintln(out, termtext.Text(msg.Content))
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Sorted(maps.Keys(m))
	return keys
}

// printChannels is another graph's state: each channel but its messages
// (printed above) as compact JSON, one line each, cut at 200 bytes, or
// "(not stored)" for one the checkpoint lacks (written before the graph
// declared it).
func printChannels(out io.Writer, v engine.Values, channels []string) {
	fmt.Fprintln(out, "\nCHANNELS")
	for _, ch := range channels {
		if ch == "messages" {
			continue
		}
		raw, stored := v[ch]
		if !stored {
			fmt.Fprintf(out, "  %-14s (not stored)\n", ch)
			continue
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			fmt.Fprintf(out, "  %-14s (not JSON: %s)\n", ch, termtext.Line(err.Error()))
			continue
		}
		text := b.String()
		if len(text) > 200 {
			cut := 200
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut-- // at a character's start: half of one shows as ⟨0xC3⟩
			}
			text = text[:cut] + "…"
		}
		fmt.Fprintf(out, "  %-14s %s\n", ch, termtext.Line(text))
	}
}

// showFormat is the graph that wrote cp (a checkpoint between its run's
// first and last names none: the thread's record says it) and its schema
// as that graph numbers it, and the version it was migrated from; e's
// graph, which reads it, for a thread that records none (stored before
// graphs were recorded).
func showFormat(ctx context.Context, e *engine.Engine, thread string, cp engine.Checkpoint) (string, error) {
	name := cp.Metadata.Graph
	if name == "" {
		var err error
		if name, err = app.RecordedGraph(ctx, e, thread); err != nil {
			return "", err
		}
	}
	format := fmt.Sprintf("graph %s, schema v%d", idText(name), cp.SchemaVersion)
	if name == "" {
		format = fmt.Sprintf("graph %s (not recorded), schema v%d", idText(e.Graph().Name), cp.SchemaVersion)
	}
	if cp.MigratedFrom != 0 {
		format += fmt.Sprintf(", migrated from v%d", cp.MigratedFrom)
	}
	return format, nil
}

// printStateLine is the ticket's counters line, or another graph's
// channels as stored.
func printStateLine(out io.Writer, g *engine.Graph, cp engine.Checkpoint, s ticket.State, thread string) {
	if g.Name != ticket.GraphName { // another graph: its channels as stored
		printChannels(out, cp.Values, g.Channels())
		return
	}
	budget := strconv.Itoa(*s.BudgetRemaining) // Decode reads a missing one as 0
	if ticket.BudgetMissing(cp.Values) {
		budget = fmt.Sprintf("0 (none stored: read as 0, so no tool is called; set it with rewind edit %s %d budgetRemaining --value %d)", idText(thread), cp.ID, ticket.TurnToolBudget)
	}
	fmt.Fprintf(out, "\nreview rounds %d · tool budget left %s · degraded %t · history v%d\n", s.ReviewRounds, budget, s.Degraded, s.HistoryVersion)
}

// messageIndex is --message N (#N also), -1 when not given.
func messageIndex(message string) (int64, error) {
	if message == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(message, "#"), 10, 64)
	if err != nil || n < 0 {
		return 0, usagef("show: --message %q is not a message index (e.g. --message 12 for #12)", named(message))
	}
	return n, nil
}
