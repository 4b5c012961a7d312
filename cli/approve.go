package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
the conversation as written, with a note that the draft went out edited.`,
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
				text, err := editDraft(c.Context(), f.store, args[0])
				if err != nil {
					return err
				}
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
// returns what was saved.
func editDraft(ctx context.Context, storeSpec, thread string) (string, error) {
	var payload string
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
		return nil
	})
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "rewind-draft-")
	if err != nil {
		return "", fmt.Errorf("edit the draft: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "draft.txt")
	if err := os.WriteFile(path, []byte(payload+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("edit the draft: %w", err)
	}
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", editor+` "$1"`, "editor", path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", fmt.Errorf("the editor (%s) exited with %d: nothing was approved", editor, exit.ExitCode())
		}
		return "", fmt.Errorf("run the editor %q: %w: set $EDITOR to one you have", editor, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read the edited draft: %w", err)
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
}
