package cli

import (
	"regexp"
	"testing"
)

// bench's last lines are what a reader compares: a short run is summed up
// whole (never "0.00 ms, 0.0 KB" for turns it did not run), and the cached
// load is named next to the load it repeats.
func TestBenchSummaryLines(t *testing.T) {
	code, out, stderr := run(t, "bench", "--store", "memory:", "--turns", "3")
	if code != ExitOK {
		t.Fatalf("bench --turns 3: %d %s %s", code, out, stderr)
	}
	short := regexp.MustCompile(`(?m)^turns 1-3: median [0-9.]+ ms, ([0-9.]+) KB a turn \(run 20 or more`)
	m := short.FindStringSubmatch(out)
	if m == nil || m[1] == "0.0" {
		t.Fatalf("a 3-turn bench's summary:\n%s", out)
	}
	code, out, stderr = run(t, "bench", "--store", "memory:", "--turns", "20")
	if code != ExitOK {
		t.Fatalf("bench --turns 20: %d %s %s", code, out, stderr)
	}
	for _, want := range []string{
		`(?m)^turns 11-20: median [0-9.]+ ms, [1-9][0-9.]* KB a turn; last 10: median [0-9.]+ ms, [1-9][0-9.]* KB a turn$`,
		`load latest [0-9.]+ ms \([0-9.]+ ms cached\), middle [0-9.]+ ms;`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Fatalf("a 20-turn bench's output lacks %s:\n%s", want, out)
		}
	}
}
