package cli

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// extremes are the numbers a hostile or careless command line gives.
var extremes = []string{
	"0", "-1", "1", "2000000000", "9e18", "9000000000000000000", "9223372036854775807",
	"-9223372036854775808", "18446744073709551615", "99999999999999999999", "NaN", "Inf",
	"-Inf", "1e400", "0x7fffffffffffffff", "-0", "", " 1", "2540400h", "-1ns", "1h1s", "876001h",
}

// numericFlagsOf is every numeric flag of the tree, by command path.
func numericFlagsOf(root *cobra.Command) map[string][]*pflag.Flag {
	all := map[string][]*pflag.Flag{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if isNumeric(f.Value.Type()) {
				all[c.CommandPath()] = append(all[c.CommandPath()], f)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return all
}

// Issue 38: `rewind bench --inline-bytes 9000000000000000000` panicked in
// makeslice and 2e9 allocated 3 GB before anything was said. Every numeric
// flag of every command (found by walking the tree, so a new one is
// covered by itself) has a range; every extreme outside it is refused on
// the command line, exit 2, one line naming the flag, nothing printed on
// stdout, before the command runs.
func TestEveryNumericFlagIsBounded(t *testing.T) {
	t.Parallel()
	root, _ := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	flags := numericFlagsOf(root)
	if len(flags) < 10 {
		t.Fatalf("found %d commands with numeric flags: the walk is broken", len(flags))
	}
	refused := 0
	refuse := refuser(t)
	for path, fs := range flags {
		for _, f := range fs {
			bv, ok := f.Value.(*boundedValue)
			if !ok {
				t.Errorf("%s --%s (%s) has no range: add it to numericFlags", path, f.Name, f.Value.Type())
				continue
			}
			for _, v := range extremes {
				// Set's answer depends on v and the range alone (not on
				// a value set before), so one tree serves every extreme,
				// and so does one for the command lines below (refuser).
				err := bv.Set(v)
				if err == nil {
					if !bv.b.allows(t, f.Value.Type(), v) {
						t.Errorf("%s --%s %q taken, outside %d..%d", path, f.Name, v, bv.b.lo, bv.b.hi)
					}
					continue
				}
				refused++
				args := append(strings.Fields(path)[1:], "--"+f.Name+"="+v)
				code, out, stderr := refuse(args...)
				if code != ExitUsage || out != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "--"+f.Name) {
					t.Errorf("%s --%s=%q: exit %d, stdout %q, stderr %q; want exit 2 and one line naming the flag", path, f.Name, v, code, out, stderr)
				}
			}
		}
	}
	if refused == 0 {
		t.Fatal("no extreme was refused")
	}
}

// allows parses v as a flag of type typ would and says whether it is in b.
func (b numBound) allows(t *testing.T, typ, v string) bool {
	t.Helper()
	switch typ {
	case "duration":
		d, err := time.ParseDuration(v)
		return err == nil && b.holds(int64(d))
	case "uint64", "uint":
		u, err := strconv.ParseUint(v, 0, 64)
		return err == nil && u <= b.hi && (b.lo <= 0 || u >= uint64(b.lo))
	case "float64", "float32":
		f, err := strconv.ParseFloat(v, 64)
		return err == nil && !math.IsNaN(f) && f >= float64(b.lo) && f <= float64(b.hi)
	}
	n, err := strconv.ParseInt(v, 0, 64)
	return err == nil && b.holds(n)
}

// The flags that allocate or start processes by their number have ranges a
// machine can hold: the bench's inline value and turns, its processes.
func TestBenchRefusesWhatWouldExhaustTheMachine(t *testing.T) {
	for _, tc := range []struct{ flag, v string }{
		{"--inline-bytes", "9000000000000000000"},
		{"--inline-bytes", "2000000000"},
		{"--inline-bytes", "-1"},
		{"--turns", "0"},
		{"--turns", "1000000000"},
		{"--processes", "100000"},
	} {
		code, out, stderr := run(t, "bench", "--store", "memory:", tc.flag, tc.v)
		if code != ExitUsage || out != "" || !strings.Contains(stderr, "out of range") || !strings.Contains(stderr, tc.flag) {
			t.Errorf("bench %s %s: exit %d, stdout %.200q, stderr %q; want exit 2, one line, nothing run", tc.flag, tc.v, code, out, stderr)
		}
	}
}

// Any string given to any numeric flag is either refused in one line or a
// number in the flag's range; never a panic.
func FuzzNumericFlags(f *testing.F) {
	for _, v := range extremes {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		root, _ := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
		for path, fs := range numericFlagsOf(root) {
			for _, fl := range fs {
				bv, ok := fl.Value.(*boundedValue)
				if !ok {
					t.Fatalf("%s --%s has no range", path, fl.Name)
				}
				err := fl.Value.Set(v)
				switch {
				case err != nil && strings.Contains(err.Error(), "\n"):
					t.Fatalf("%s --%s %q: %q is not one line", path, fl.Name, v, err)
				case err == nil && !bv.b.allows(t, fl.Value.Type(), v):
					t.Fatalf("%s --%s %q taken, outside its range", path, fl.Name, v)
				}
			}
		}
	})
}
