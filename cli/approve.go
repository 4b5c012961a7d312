package cli

import (
	"context"
	"fmt"
	"strings"
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
	var payloadFile string
	var edit bool
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
say because another answer came first.`,
		Example: `  rewind run --thread t --input "…" --draft --auth-ttl 1h
  rewind approve t
  rewind approve t --edit                   # change the draft, then approve it
  rewind approve t --payload-file draft.txt`,
		Args: between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			req := worker.Request{Op: worker.OpApprove, Thread: args[0]}
			switch {
			case edit && payloadFile != "":
				return usagef("give the edited draft once: --edit or --payload-file, not both")
			case payloadFile != "":
				text, err := readInput(payloadFile, c.InOrStdin())
				if err != nil {
					return err
				}
				if req.Payload, err = checkPayload(text); err != nil {
					return err
				}
			case edit:
				// The approval is of what the editor showed: refused if
				// the thread moved on or its draft changed meanwhile.
				text, seen, err := editDraft(c.Context(), f.store, args[0])
				if err != nil {
					return err
				}
				req.Seen = seen
				if req.Payload, err = checkPayload(text); err != nil {
					return err
				}
			}
			return f.do(c.Context(), c.OutOrStdout(), req)
		},
	}
	c.Flags().StringVar(&payloadFile, "payload-file", "", "approve the draft as the text of `PATH` (- for stdin) instead of as written")
	c.Flags().BoolVar(&edit, "edit", false, "edit the draft in $VISUAL or $EDITOR before approving it")
	f.add(c)
	return c
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
func editDraft(ctx context.Context, storeSpec, thread string) (string, ticket.Seen, error) {
	var payload string
	var seen ticket.Seen
	err := withEngine(ctx, storeSpec, func(e *engine.Engine) error {
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
