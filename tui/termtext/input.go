package termtext

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxInput is the most one message may hold, in bytes, wherever it is
// given: typed or pasted in the TUI's composer and fork dialog, or given to
// the CLI with --input or --input-file. It is far more than a support
// message needs, and half the OS's limit on one argument (128 KB on Linux),
// in which the TUI hands a message to its worker processes.
const MaxInput = 64 << 10

// Size is a byte count as people read it: 900 bytes, 64 KB, 1.2 MB.
func Size(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<10)), ".0") + " KB"
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MB"
}

// Count is a count as people read it, its digits grouped in threes:
// 1,072,714 (token totals of a long thread run to millions).
func Count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TooLong says why a message of n bytes is refused, or "" when it fits:
// "X (N bytes), over the 64 KB (65536 bytes) one message may hold", for
// the caller to put in its sentence ("the message is …: shorten it").
func TooLong(n int) string {
	if n <= MaxInput {
		return ""
	}
	return fmt.Sprintf("%s (%d bytes), over the %s (%d bytes) one message may hold", Size(n), n, Size(MaxInput), MaxInput)
}
