package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"rewind/engine/worker"
)

// rootHelp is `rewind help`: every command with its form, then what several
// commands share (stores, kill points), then the TUI's flags. It is built
// from the commands, so a new command appears here by itself.
func rootHelp(root *cobra.Command) {
	w := root.OutOrStdout()
	fmt.Fprintf(w, "rewind: %s\n\n%s\n\nUsage:\n", root.Short, root.Long)
	line(w, "rewind [flags]", "the terminal UI (as `rewind tui`)")
	line(w, "rewind COMMAND [ARGS] [flags]", "")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() && c.Name() != "help" {
			continue
		}
		form := "rewind " + c.Use
		if c.Name() == "help" {
			form = "rewind help [COMMAND]"
		}
		if c.HasAvailableSubCommands() {
			var subs []string
			for _, s := range c.Commands() {
				if s.IsAvailableCommand() {
					subs = append(subs, s.Name())
				}
			}
			sort.Strings(subs)
			form += " " + strings.Join(subs, "|")
		}
		line(w, form, c.Short)
	}
	fmt.Fprint(w, `
Stores (--store SPEC): memory:, sqlite:PATH or postgres://USER[:PASS]@HOST:PORT/DB; without it
$REWIND_STORE, then $DATABASE_URL, then sqlite under $XDG_STATE_HOME/rewind.

Kill points (--kill-at POINT of run, resume, fork, approve, reject and drill; POINT@N: the Nth time):
`)
	for _, p := range worker.Points {
		line(w, string(p.Name), p.Desc)
	}
	for _, p := range worker.Generic {
		if _, own := worker.Lookup(string(p.Name)); !own {
			line(w, string(p.Name), p.Desc)
		}
	}
	fmt.Fprintf(w, "\nFlags of the TUI:\n%s\nRun `rewind COMMAND --help` for a command's flags and examples.\n", root.LocalFlags().FlagUsagesWrapped(100))
}

// line prints a form and what it does in two columns, the text wrapped;
// a long form gets the text on the lines below it.
func line(w io.Writer, form, what string) {
	const col, width = 40, 100
	words := strings.Fields(what)
	if len(form) > col-4 && len(words) > 0 {
		fmt.Fprintf(w, "  %s\n", form)
		form = ""
	}
	cur := fmt.Sprintf("  %-*s", col-2, form)
	if len(words) == 0 {
		fmt.Fprintln(w, strings.TrimRight(cur, " "))
		return
	}
	n := 0
	for _, word := range words {
		if n > 0 && len(cur)+1+len(word) > width {
			fmt.Fprintln(w, cur)
			cur, n = strings.Repeat(" ", col), 0
		}
		if n > 0 {
			cur += " "
		}
		cur += word
		n++
	}
	fmt.Fprintln(w, cur)
}
