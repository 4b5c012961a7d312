package cli

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/engine/worker"
	"rewind/tui/termtext"
)

// newApproveCmd is `rewind approve` (asWorker: `rewind worker approve`).
func newApproveCmd(asWorker bool) *cobra.Command {
	f := execFlags{worker: asWorker}
	var payloadFile, op string
	var edit bool
	var authTTL time.Duration
	var seen seenFlags
	c := &cobra.Command{
		Use:   "approve T",
		Short: "approve the draft thread T waits on (as written, or edited), and carry on",
		Long: `Approve the draft thread T waits on at the approval gate, and carry on:
create_draft then writes it (once, looked up by operation id on any retry).
The answer is recorded as a decision, never as conversation input.

With --edit the draft opens in $VISUAL or $EDITOR first, and with
--payload-file the draft is the file's text: the operation records the
edited text, create_draft writes it and verify checks it; the reply stays in
the conversation as written, with a note that the draft went out edited.

The answer holds the thread from the decision to the end of the run it lets
go on, and is refused, with nothing written, when the thread moved on or its
draft changed since approve began (with --edit: since the editor opened),
say because another answer came first. --op pins the draft you reviewed
(rewind show T names it): the answer is refused when the thread waits on
another one, say a redraft that came meanwhile.

A draft written under no grant (one a v1 checkpoint left waiting) is
blocked when create_draft checks it; --auth-ttl D gives it one with the
answer, lasting D from now, recorded in the decision. A draft that has a
grant keeps its own.`,
		Example: `  rewind run --thread t --input "…" --draft --auth-ttl 1h
  rewind approve t
  rewind approve t --edit                   # change the draft, then approve it
  rewind approve t --payload-file draft.txt --op op-draft-c9-1f2e3d4c
  rewind approve old-thread --auth-ttl 1h   # a v1 draft, written under no grant`,
		Args: between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			req := worker.Request{Op: worker.OpApprove, Thread: args[0], Seen: seen.seen(op), AuthTTL: authTTL}
			if c.Flags().Changed("auth-ttl") && authTTL <= 0 {
				return usagef("--auth-ttl %s: a grant must last longer than 0: give --auth-ttl D with D > 0, e.g. 1h", authTTL)
			}
			switch {
			case edit && payloadFile != "":
				return usagef("give the edited draft once: --edit or --payload-file, not both")
			case payloadFile != "":
				text, err := readFileFlag("--payload-file", "draft", payloadFile, c.InOrStdin())
				if err != nil {
					return err
				}
				if req.Payload, err = checkPayload(text); err != nil {
					return err
				}
			case edit:
				// The approval is of what the editor showed: refused if
				// the thread moved on or its draft changed meanwhile.
				text, seen, err := editDraft(c.Context(), f.store, args[0], givenGraph(c, f.graph), op)
				if err != nil {
					return err
				}
				req.Seen = worker.Seen(seen)
				if req.Payload, err = checkPayload(text); err != nil {
					return err
				}
			}
			return f.do(c.Context(), c.OutOrStdout(), req)
		},
	}
	c.Flags().StringVar(&payloadFile, "payload-file", "", "approve the draft as the text of `PATH` (- for stdin) instead of as written")
	c.Flags().BoolVar(&edit, "edit", false, "edit the draft in $VISUAL or $EDITOR before approving it")
	c.Flags().StringVar(&op, "op", "", "approve only if the thread waits on draft operation `ID` (the one you reviewed)")
	c.Flags().DurationVar(&authTTL, "auth-ttl", 0, "give a draft written under no grant one that lasts `D` from now (e.g. 1h), recorded in the decision")
	seen.add(c, asWorker)
	f.add(c)
	return c
}

// seenFlags are what a TUI's worker was shown when its person answered:
// the head and the draft's hash, with --op the draft (worker only, hidden).
type seenFlags struct {
	head    int64
	payload string
}

func (s *seenFlags) add(c *cobra.Command, asWorker bool) {
	if !asWorker {
		return
	}
	c.Flags().Int64Var(&s.head, "seen-head", 0, "the head checkpoint the person looked at")
	c.Flags().StringVar(&s.payload, "seen-sha256", "", "the SHA-256 of the draft the person looked at")
	_ = c.Flags().MarkHidden("seen-head")
	_ = c.Flags().MarkHidden("seen-sha256")
}

func (s seenFlags) seen(op string) worker.Seen {
	return worker.Seen{Head: s.head, Operation: op, PayloadHash: s.payload}
}

func checkPayload(text string) (string, error) {
	switch {
	case strings.TrimSpace(text) == "":
		return "", usagef("the edited draft is empty: nothing was approved; run approve again, or reject the draft with --reason")
	case !utf8.ValidString(text):
		return "", usagef("the edited draft is not UTF-8 text: nothing was approved")
	case len(text) > termtext.MaxInput:
		return "", usagef("the edited draft is longer than %s: shorten it", termtext.Size(termtext.MaxInput))
	}
	return text, nil
}

// editDraft opens the draft the thread waits on in the user's editor and
// returns what was saved, and what the editor was opened on.
func editDraft(ctx context.Context, storeSpec, thread, graph, wantOp string) (string, ticket.Seen, error) {
	var payload string
	var seen ticket.Seen
	// The thread's own graph reads it; another than the ticket's has no
	// draft to edit, and is refused as approve is on it.
	if err := anyGraph(graph, func(g graphEntry) error { return g.takes(worker.Request{Op: worker.OpApprove}) }); err != nil {
		return "", seen, err
	}
	ctx, err := forThread(ctx, thread, graph)
	if err != nil {
		return "", seen, err
	}
	err = withEngine(ctx, storeSpec, func(e *engine.Engine) error {
		if err := graphs[e.Graph().Name].takes(worker.Request{Op: worker.OpApprove}); err != nil {
			return err
		}
		cp, err := e.Latest(ctx, thread)
		if err != nil {
			return err
		}
		s, err := ticket.Decode(cp.Values, "operations")
		if err != nil {
			return err
		}
		op, ok := ticket.PendingDraft(s)
		if !ok {
			return fmt.Errorf("thread %s waits on no draft: nothing to edit (see `rewind show %s`)", idText(thread), idText(thread))
		}
		if wantOp != "" && op.ID != wantOp {
			return fmt.Errorf("approve on thread %s: %w: it waits on draft %s, not on %s (--op): nothing was approved; read it with `rewind show %s`, then answer again",
				idText(thread), ticket.ErrAnswerStale, idText(op.ID), idText(wantOp), idText(thread))
		}
		payload = op.Payload
		seen, _ = ticket.Look(cp)
		seen.Operation, seen.PayloadHash = op.ID, ticket.PayloadHash(op.Payload)
		return nil
	})
	if err != nil {
		return "", seen, err
	}
	b, err := inEditor(ctx, "draft.txt", []byte(payload+"\n"), "nothing was approved")
	if err != nil {
		return "", seen, err
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), seen, nil
}
