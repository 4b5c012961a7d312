package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"rewind/engine"
	"rewind/tui/termtext"
)

func newEditCmd() *cobra.Command {
	var store, value, valueFile, graph string
	var asJSON, takeOver bool
	c := &cobra.Command{
		Use:   "edit T CHECKPOINT CHANNEL",
		Short: "set one channel of the state at CHECKPOINT (in $EDITOR, or --value) as a new update checkpoint: a branch to resume from",
		Long: `Edit opens CHANNEL's value at CHECKPOINT as JSON in $VISUAL or $EDITOR (or
takes --value / --value-file), checks it (the channel must be able to hold
it, and the graph's state must still read), and stores it as a new update
checkpoint whose parent is CHECKPOINT, keeping the tasks that were due
there. Nothing is overwritten: when CHECKPOINT already has a continuation
the edit is a new branch. Then resume it (rewind resume T NEW) to run the
due tasks on the edited state, and compare with rewind diff. A value holds
at most 64 KB however it is given, and passes the graph's own check of the
channel (a tool budget is a whole number 0 or more; a summary keeps every
pinned fact of the messages it covers; a scenario is one a turn may name).`,
		Example: `  rewind edit ticket-1 1 messages           # change what the customer wrote, then:
  rewind resume ticket-1 17
  rewind edit ticket-1 5 reviewRounds --value 2`,
		Args: between(3, 3),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := checkpointArg(args[1])
			if err != nil {
				return err
			}
			if value != "" && valueFile != "" {
				return usagef("give the value once: --value JSON or --value-file PATH, not both")
			}
			thread, channel, out := args[0], args[2], c.OutOrStdout()
			var raw []byte
			switch {
			case len(value) > termtext.MaxInput:
				return usagef("the --value of %s is longer than the %s (%d bytes) one value may hold: shorten it", named(channel), termtext.Size(termtext.MaxInput), termtext.MaxInput)
			case value != "":
				raw = []byte(value)
			case valueFile != "":
				text, err := readFileFlag("--value-file", "value", valueFile, c.InOrStdin())
				if err != nil {
					return err
				}
				raw = []byte(text)
			}
			if raw != nil && !json.Valid(raw) {
				return usagef("the value of %s is not JSON: give it as JSON, e.g. --value '\"text\"' or --value 3", named(channel))
			}
			return withThreadEngine(c.Context(), store, thread, givenGraph(c, graph), func(e *engine.Engine) error {
				if raw == nil {
					cp, err := e.Get(c.Context(), thread, id)
					if err != nil {
						return err
					}
					cur, ok := cp.Values[channel]
					if !ok {
						return fmt.Errorf("edit thread %s: %w: no channel %q at @%d", idText(thread), engine.ErrBadEdit, named(channel), id)
					}
					if n := len(indentJSON(cur)) + 1; n > termtext.MaxInput {
						return fmt.Errorf("edit thread %s: %s at @%d is %s as JSON, over the %s one edited value may hold, so it cannot be edited whole: nothing was stored; edit another channel, or fork from an earlier checkpoint", idText(thread), named(channel), id, termtext.Size(n), termtext.Size(termtext.MaxInput))
					}
					if raw, err = editJSON(c.Context(), cur, channel); err != nil {
						return err
					}
					if bytes.Equal(bytes.TrimSpace(raw), bytes.TrimSpace(indentJSON(cur))) {
						fmt.Fprintf(out, "%s at @%d unchanged: nothing stored\n", channel, id)
						return nil
					}
				}
				cp, err := e.EditState(c.Context(), thread, id, channel, raw, engine.UpdateOptions{TakeOver: takeOver})
				if errors.Is(err, engine.ErrBadEdit) {
					return fmt.Errorf("%w; nothing was stored", err)
				}
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(out, map[string]any{"thread": thread, "from": id, "channel": channel, "checkpoint": cp.ID, "pending": engine.DescribeTasks(cp.Tasks)})
				}
				fmt.Fprintf(out, "edited %s at @%d: new checkpoint @%d (update, parent @%d)\n", channel, id, cp.ID, id)
				if len(cp.Tasks) > 0 {
					fmt.Fprintf(out, "  due: %s — run them on the edited state: rewind resume %s %d%s\n", engine.DescribeTasks(cp.Tasks), idText(thread), cp.ID, graphArg(e.Graph().Name))
				} else {
					fmt.Fprintf(out, "  nothing is due there: continue with new input: rewind fork %s %d --input …\n", idText(thread), cp.ID)
				}
				return nil
			})
		},
	}
	addStore(c, &store)
	addGraphFlag(c, &graph)
	addJSON(c, &asJSON)
	c.Flags().StringVar(&value, "value", "", "the channel's new value as `JSON`, instead of opening an editor")
	c.Flags().StringVar(&valueFile, "value-file", "", "read the new value (JSON) from `PATH`, or - for stdin")
	c.Flags().BoolVar(&takeOver, "take-over", false, "write even if another live process holds the thread (it is fenced out)")
	return c
}

func indentJSON(raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return raw
	}
	return b.Bytes()
}

// editJSON opens raw, indented, in the user's editor and returns what was
// saved.
func editJSON(ctx context.Context, raw []byte, channel string) ([]byte, error) {
	b, err := inEditor(ctx, channel+".json", append(indentJSON(raw), '\n'), "nothing was stored")
	if err != nil {
		return nil, err
	}
	if !json.Valid(b) {
		return nil, usagef("the edited %s is not JSON: nothing was stored; run edit again", channel)
	}
	return b, nil
}
