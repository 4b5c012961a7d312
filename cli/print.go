package cli

// Printing helpers. Anything printed from stored or model text goes
// through clean.

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"rewind/engine"
)

// clean makes untrusted text safe to print on a terminal: control
// characters (ESC, C1, CR, …) and bidi overrides become visible escapes.
func clean(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			fmt.Fprintf(&b, "\\x%02x", r)
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			fmt.Fprintf(&b, "\\u%04x", r)
		case r == 0xfffd:
			b.WriteString("\\ufffd")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// parentLabel names a checkpoint's parent: its id (after prefix), "pruned
// (was #N)" when prune deleted it, or none for a root.
func parentLabel(cp engine.Checkpoint, none, prefix string) string {
	switch {
	case cp.ParentID != 0:
		return prefix + strconv.FormatInt(cp.ParentID, 10)
	case cp.RerootedFrom != 0:
		return fmt.Sprintf("pruned (was #%d)", cp.RerootedFrom)
	}
	return none
}

// byteSize prints a size the way people read it.
func byteSize(n int) string {
	switch {
	case n == 0:
		return "size not recorded"
	case n < 10_000:
		return fmt.Sprintf("%d bytes", n)
	case n < 10_000_000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

func orDash(v any) any {
	if s, ok := v.(string); ok && s == "" {
		return "—"
	}
	return v
}
