package pgtest

import (
	"strings"
	"testing"
)

// The summary names a test skipped as a whole, the one subtest of a test
// that skipped only that part, and counts a test's many; a long list is
// cut to one line that says how many more.
func TestSkippedSummary(t *testing.T) {
	got := byTest([]string{"TestA", "TestB/postgres", "TestC/x", "TestC/y", "TestD (its PostgreSQL part)"})
	if want := "TestA, TestB/postgres, TestC (2), TestD (its PostgreSQL part)"; got != want {
		t.Errorf("byTest: %q, want %q", got, want)
	}
	var many []string
	for range 60 {
		many = append(many, "TestAVeryLongNameOfAPostgreSQLTest"+strings.Repeat("x", len(many)))
	}
	got = byTest(many)
	if len(got) > 360 || !strings.HasSuffix(got, "more (-v names each)") || !strings.HasPrefix(got, "TestAVeryLong") {
		t.Errorf("60 names: %d bytes: %q", len(got), got)
	}
}
