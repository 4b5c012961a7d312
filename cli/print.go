package cli

// Printing helpers. Anything printed from stored or model text, an id or
// an error goes through termtext, the one sanitizer (Text, Line, Name,
// Error), and every --json output through writeJSON.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"rewind/store"
	"rewind/tui/termtext"
)

// named is an id, or a value given on the command line, in a message (as
// store.Name): %q quotes it, %s leaves a plain word bare and quotes
// anything else, and past 64 bytes it is cut with …(N bytes).
func named(s string) store.Name { return store.Name(s) }

// idText is an id in the CLI's output, as its errors show it (store.Name):
// a plain word bare, anything else quoted with its controls escaped
// ("evil\x1b]52;…"), so a crafted id fakes no row and can be typed back in
// a shell ($'…'), and cut past 64 bytes so a listing stays readable.
func idText(id string) string { return termtext.Line(fmt.Sprintf("%s", named(id))) }

// writeJSON writes v as indented JSON in which C1 controls, DEL and bidi
// characters are escaped too (encoding/json escapes only C0), so stored
// text cannot act on a terminal through --json either.
func writeJSON(out io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode the JSON output: %w", err)
	}
	_, err := out.Write(termtext.JSON(b.Bytes()))
	return err
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
