package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "write a man page for rewind and each command into DIR",
		Example: `  rewind man /tmp/man && man -l /tmp/man/rewind-log.1
  sudo rewind man /usr/local/share/man/man1`,
		Args: between(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man: create %s: %w", dir, err)
			}
			if err := writeManTree(c.Root(), dir, manDate(), "rewind "+version()); err != nil {
				return fmt.Errorf("man: write pages into %s: %w", dir, err)
			}
			fmt.Fprintf(c.OutOrStdout(), "wrote man pages into %s (man -l %s/rewind.1)\n", dir, dir)
			return nil
		},
	}
}

// The pages are written here, not by cobra's doc package: it links a
// Markdown parser (blackfriday, go-md2man) whose package init every
// command paid at start, for text that is plain already.

// manDate is the pages' date: $SOURCE_DATE_EPOCH's (reproducible
// builds), else today's.
func manDate() string {
	t := time.Now()
	if e := os.Getenv("SOURCE_DATE_EPOCH"); e != "" {
		var sec int64
		if _, err := fmt.Sscan(e, &sec); err == nil {
			t = time.Unix(sec, 0).UTC()
		}
	}
	return t.Format("Jan 2006")
}

// writeManTree writes a page for c and each visible command under it.
func writeManTree(c *cobra.Command, dir, date, source string) error {
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := writeManTree(sub, dir, date, source); err != nil {
			return err
		}
	}
	name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
	return os.WriteFile(filepath.Join(dir, name), []byte(manPage(c, date, source)), 0o644)
}

// manPage is c's page in roff: NAME, SYNOPSIS, DESCRIPTION, OPTIONS,
// EXAMPLE and SEE ALSO, as cobra's doc package laid them out.
func manPage(c *cobra.Command, date, source string) string {
	c.InitDefaultHelpFlag()
	var b strings.Builder
	fmt.Fprintf(&b, ".nh\n.TH \"REWIND\" \"1\" %q %q \"\"\n\n", date, source)
	fmt.Fprintf(&b, ".SH NAME\n%s - %s\n\n", strings.ReplaceAll(c.CommandPath(), " ", "-"), roffText(c.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n\\fB%s\\fP\n\n", roffText(c.UseLine()))
	long := c.Long
	if long == "" {
		long = c.Short
	}
	b.WriteString(".SH DESCRIPTION\n")
	for i, para := range strings.Split(strings.TrimSpace(long), "\n\n") {
		if i > 0 {
			b.WriteString(".PP\n")
		}
		b.WriteString(roffLines(para) + "\n")
	}
	b.WriteString("\n")
	manFlags(&b, "OPTIONS", c.NonInheritedFlags())
	manFlags(&b, "OPTIONS INHERITED FROM PARENT COMMANDS", c.InheritedFlags())
	if c.Example != "" {
		fmt.Fprintf(&b, ".SH EXAMPLE\n.EX\n%s\n.EE\n\n", roffLines(c.Example))
	}
	var see []string
	if c.HasParent() {
		see = append(see, strings.ReplaceAll(c.Parent().CommandPath(), " ", "-"))
	}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
			see = append(see, strings.ReplaceAll(sub.CommandPath(), " ", "-"))
		}
	}
	if len(see) > 0 {
		b.WriteString(".SH SEE ALSO\n")
		for i, s := range see {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "\\fB%s(1)\\fP", s)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// manFlags lists the flags of fs under a heading: each as --name=default
// and its usage, the value's name (backquoted in the usage) in bold.
func manFlags(b *strings.Builder, heading string, fs *pflag.FlagSet) {
	if !fs.HasAvailableFlags() {
		return
	}
	fmt.Fprintf(b, ".SH %s\n", heading)
	first := true
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		if !first {
			b.WriteString(".PP\n")
		}
		first = false
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			fmt.Fprintf(b, "\\fB-%s\\fP, ", f.Shorthand)
		}
		def := roffText(f.DefValue)
		if f.Value.Type() == "string" {
			def = roffText(fmt.Sprintf("%q", f.DefValue))
		}
		if f.NoOptDefVal != "" {
			fmt.Fprintf(b, "\\fB--%s\\fP[=%s]\n", f.Name, def)
		} else {
			fmt.Fprintf(b, "\\fB--%s\\fP=%s\n", f.Name, def)
		}
		fmt.Fprintf(b, "\t%s\n\n", roffUsage(f.Usage))
	})
	b.WriteString("\n")
}

// roffUsage is a flag's usage with each `NAME` in bold (an unpaired
// backquote is left as it is).
func roffUsage(s string) string {
	parts := strings.Split(roffText(s), "`")
	if len(parts)%2 == 0 {
		return roffText(s)
	}
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			p = `\fB` + p + `\fR`
		}
		b.WriteString(p)
	}
	return b.String()
}

// roffText escapes roff's escape character, the backslash.
func roffText(s string) string { return strings.ReplaceAll(s, `\`, `\e`) }

// roffLines is roffText of lines, none of them read as a request: a
// line that begins with . or ' starts with a zero-width \&.
func roffLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = roffText(l)
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			l = `\&` + l
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}
