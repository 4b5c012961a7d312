package ticket

import (
	"regexp"
	"slices"
	"testing"
)

// The regexps the mock's matchers stand for.
var mockRegexps = []struct {
	re *regexp.Regexp
	m  mockLine
}{
	{regexp.MustCompile(`(?m)^REQUEST: (.*)$`), reRequest},
	{regexp.MustCompile(`(?m)^REVISE: the operator rejected the previous draft: (.*)$`), reRevise},
	{regexp.MustCompile(`(?m)^SCENARIO: (\S+)$`), reScenario},
	{regexp.MustCompile(`(?m)^CONTEXT: order (\S+)`), reContext},
	{regexp.MustCompile(`(?m)^SUBTASK (\S+): (.*)$`), reSubtask},
	{regexp.MustCompile(`(?m)^TOOL (\w+)\((.*?)\) RESULT: (.*)$`), reTool},
	{regexp.MustCompile(`(?m)^FEEDBACK: (.*)$`), reFeedback},
	{regexp.MustCompile(`(?m)^REVIEW ROUND (\d+)$`), reRound},
	{regexp.MustCompile(`(?m)^OUTPUT (\S+) \[(\w+)\]: (.*)$`), reOutput},
	{regexp.MustCompile(`(?m)^FINDING (\S+) \[(\w+)\]: (.*)$`), reFinding},
}

var mockPrompts = []string{
	"REQUEST: where is SO1?\nCONTEXT: order SO1 (named in #3 user)\nSCENARIO: site-log",
	"SUBTASK t-1-order: find SO1: now\nTOOL lookup_order({\"order\":\"SO1\"}) RESULT: {\"stage\":\"x) RESULT: y\"}\nFEEDBACK: more",
	"REVIEW ROUND 2\nREQUIREMENT #1 user: x\nOUTPUT t-1 [order]: late\nOUTPUT t-2 [ship ping]: x\nOUTPUT t-3 [pay]:x\nOUTPUT  [a]: b\nOUTPUT t-4 [é]: c",
	"FINDING t-1 [approved]: a\r\nFINDING t-2 [redo]: b\nREVISE: the operator rejected the previous draft: too long.\n",
	"SUBTASK a:: b\nSUBTASK a:\tb\nSUBTASK : b\nSUBTASK ab: \nTOOL (x) RESULT: y\nTOOL f(x) RESULT:y\nTOOL f_1(x) RESULT: \nREVIEW ROUND \nREVIEW ROUND 1a\nSCENARIO: a b\nSCENARIO: \nSCENARIO: x\r",
	"CONTEXT: order \nCONTEXT: order \tX\nCONTEXT: order é\xff rest", "", "\n\n", "REQUEST: \xff\nREQUEST: second",
}

func TestMockMatchersAreTheirRegexps(t *testing.T) {
	t.Parallel()
	for _, p := range mockPrompts {
		checkMockMatchers(t, p)
	}
}

func checkMockMatchers(t *testing.T, p string) {
	t.Helper()
	for _, c := range mockRegexps {
		if got, want := c.m.FindStringSubmatch(p), c.re.FindStringSubmatch(p); !slices.Equal(got, want) {
			t.Fatalf("%s on %q: got %q, want %q", c.re, p, got, want)
		}
		got, want := c.m.FindAllStringSubmatch(p, -1), c.re.FindAllStringSubmatch(p, -1)
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("%s (all) on %q: got %q, want %q", c.re, p, got, want)
		}
	}
}

func FuzzMockMatchers(f *testing.F) {
	for _, p := range mockPrompts {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) { checkMockMatchers(t, p) })
}
