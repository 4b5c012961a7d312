package cli

// Every numeric flag of every command has a range: a number outside it is
// refused while the command line is read (exit 2, one line), before the
// command does anything. `rewind bench --inline-bytes 9000000000000000000`
// panicked in makeslice, and 2e9 allocated 3 GB before saying a word.

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// numBound is the range of a numeric flag: lo to hi, both included
// (nanoseconds for a duration), and what the number counts, for the
// refusal.
type numBound struct {
	lo   int64
	hi   uint64
	what string
}

// holds says whether n is in b.
func (b numBound) holds(n int64) bool { return n >= b.lo && (n < 0 || uint64(n) <= b.hi) }

// numericFlags holds the range of every numeric flag, by name (a name
// means the same in every command that has it). A numeric flag missing
// here is left unchecked, and TestEveryNumericFlagIsBounded names it.
var numericFlags = map[string]numBound{
	"auth-ttl":            {0, uint64(10 * 365 * 24 * time.Hour), "how long the grant lasts, e.g. 1h"},
	"mock-latency":        {0, uint64(time.Hour), "the wait per mock call, e.g. 300ms"},
	"mock-jitter":         {0, uint64(time.Hour), "the most added to a mock call's wait, e.g. 50ms"},
	"mock-seed":           {0, math.MaxUint64, "any seed"},
	"max-tokens-per-turn": {0, 1_000_000_000, "the tokens a turn may use (0: no limit)"},
	"turns":               {1, 1_000_000, "how many turns to run"},
	"inline-bytes":        {0, 64 << 20, "the inline value's size in bytes"},
	"processes":           {0, 64, "how many new processes time the loads (0: none)"},
	"last":                {0, 1_000_000_000, "how many of the newest checkpoints (log) or most recently updated threads (threads) to list, e.g. -n 20 (0 lists them all)"},
	"limit":               {0, 1_000_000_000, "how many to list (the newest checkpoints in log, the most recently updated threads in threads, the first hits in search), e.g. --limit 20 (0 lists them all)"},
	"seen-head":           {0, math.MaxInt64, "a checkpoint id"},
}

// isNumeric says whether a flag of pflag type typ takes a number.
func isNumeric(typ string) bool {
	switch typ {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
		"float32", "float64", "duration":
		return true
	}
	return false
}

// boundedValue is a numeric flag's value that refuses a number outside
// its range.
type boundedValue struct {
	pflag.Value
	b numBound
}

func (v *boundedValue) Set(s string) error {
	in := true
	var err error
	lo, hi := strconv.FormatInt(v.b.lo, 10), strconv.FormatUint(v.b.hi, 10)
	switch v.Type() {
	case "duration":
		var d time.Duration
		d, err = time.ParseDuration(s)
		in = v.b.holds(int64(d))
		lo, hi = time.Duration(v.b.lo).String(), time.Duration(v.b.hi).String()
	case "uint", "uint8", "uint16", "uint32", "uint64":
		var u uint64
		u, err = strconv.ParseUint(s, 0, 64)
		in = u <= v.b.hi && (v.b.lo <= 0 || u >= uint64(v.b.lo))
	case "float32", "float64":
		var f float64
		f, err = strconv.ParseFloat(s, 64)
		in = !math.IsNaN(f) && f >= float64(v.b.lo) && f <= float64(v.b.hi)
	default:
		var n int64
		n, err = strconv.ParseInt(s, 0, 64)
		in = v.b.holds(n)
	}
	if err != nil {
		return v.Value.Set(s) // the value's own refusal of what is not its number
	}
	if !in {
		return fmt.Errorf("out of range (%s to %s): give %s", lo, hi, v.b.what)
	}
	return v.Value.Set(s)
}

// boundFlags puts the range of numericFlags on every numeric flag of c
// and its subcommands.
func boundFlags(c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if _, done := f.Value.(*boundedValue); done || !isNumeric(f.Value.Type()) {
			return
		}
		if b, ok := numericFlags[f.Name]; ok {
			f.Value = &boundedValue{f.Value, b}
		}
	})
	for _, sub := range c.Commands() {
		boundFlags(sub)
	}
}
