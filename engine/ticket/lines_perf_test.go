package ticket

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The hand-written readers replaced these regexps and helpers; the tests
// below hold them as the specification and compare on many lines.
var (
	specSingleLine = regexp.MustCompile(`^#(\d+) ([^:\n]+): (.*)$`)
	specRangeLine  = regexp.MustCompile(`^#(\d+)–#(\d+) ([^:\n]+): (.*)$`)
	specRetired    = regexp.MustCompile(`^(.*?)(?:; )?(\d+) facts? retired$`)
	specAnswerLine = regexp.MustCompile(`^[\s\-*•]*#(\d+) ([^:\n]+):\s*(.*)$`)
	specLine       = regexp.MustCompile(`^(#\d+) ([^:]+): (.*)$`)
)

func specParseLine(line string) (entry, bool) {
	if m := specRangeLine.FindStringSubmatch(line); m != nil {
		from, _ := strconv.Atoi(m[1])
		to, _ := strconv.Atoi(m[2])
		e := entry{from: from, to: to, speakers: splitSpeakers(m[3]), text: m[4], phase: true}
		if r := specRetired.FindStringSubmatch(m[4]); r != nil {
			e.text = r[1]
			e.retired, _ = strconv.Atoi(r[2])
		}
		return e, from > 0 && to >= from
	}
	if m := specSingleLine.FindStringSubmatch(line); m != nil {
		i, _ := strconv.Atoi(m[1])
		sp := strings.TrimSpace(m[2])
		return entry{from: i, to: i, speakers: []string{sp}, text: m[3], class: classify(sp, m[3])}, i > 0
	}
	return entry{}, false
}

func specRender(e entry) string {
	if !e.phase {
		return fmt.Sprintf("#%d %s: %s", e.from, e.speakers[0], e.text)
	}
	digest := e.text
	if e.retired > 0 {
		noun := "facts"
		if e.retired == 1 {
			noun = "fact"
		}
		digest = strings.TrimPrefix(fmt.Sprintf("%s; %d %s retired", digest, e.retired, noun), "; ")
	}
	return fmt.Sprintf("#%d–#%d %s: %s", e.from, e.to, speakerList(e.speakers), digest)
}

func specAnswerLines(answer string) map[int]answerLine {
	out := map[int]answerLine{}
	for _, line := range strings.Split(answer, "\n") {
		m := specAnswerLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		i, err := strconv.Atoi(m[1])
		if _, dup := out[i]; err != nil || dup {
			continue
		}
		out[i] = answerLine{speaker: strings.TrimSpace(m[2]), text: oneLine(m[3])}
	}
	return out
}

func specSummaryAnswer(prompt string) string {
	var out []string
	for _, line := range strings.Split(prompt, "\n") {
		m := specLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		words := strings.Fields(m[3])
		text := strings.Join(words, " ")
		if len(words) > 14 {
			text = strings.Join(words[:14], " ") + " …"
			for _, f := range facts(m[3]) {
				if !strings.Contains(text, f) {
					text += " " + f
				}
			}
		}
		out = append(out, fmt.Sprintf("%s %s: %s", m[1], m[2], text))
	}
	return strings.Join(out, "\n")
}

func specUnionSpeakers(a, b []string) []string {
	seen := map[string]bool{}
	var all []string
	for _, x := range append(append([]string(nil), a...), b...) {
		if !seen[x] {
			seen[x] = true
			all = append(all, x)
		}
	}
	out := all[:0]
	for _, x := range all {
		if f := family(x); f != x && seen[f] {
			continue
		}
		out = append(out, x)
	}
	return out
}

func specClipTo(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}

// lineCorpus is summary lines of a long conversation, then the same lines
// bent every way a model or an old summary might bend them.
func lineCorpus(t *testing.T) []string {
	c := newConversation(t, mockAnswer)
	seen := map[string]bool{}
	var lines []string
	add := func(l string) {
		if !seen[l] {
			seen[l] = true
			lines = append(lines, l)
		}
	}
	for turn := 0; turn < 150; turn++ {
		c.add(simTurn(turn)...)
		if c.compact() {
			for _, l := range strings.Split(c.sum.Text, "\n") {
				add(l)
			}
		}
	}
	for _, l := range []string{
		"", "#", "#1", "#1 ", "#1 a", "#1 a:", "#1 a: ", "#1 a:b", "#1 :x", "#1  a: b", "#0 a: b", "#-1 a: b", "#01 a: b", "# 1 a: b",
		"#1–#2 a: b", "#1–#1 a: b", "#2–#1 a: b", "#0–#1 a: b", "#1–# a: b", "#1–#2a: b", "#1-#2 a: b", "#1–#2 : b",
		"#99999999999999999999 a: b", "#1–#99999999999999999999 a: b", "#9223372036854775807 a: b",
		"#1 a: b\nc", "#1 a\n: b", "#1–#3 a, b,  c , : x", "#1–#3 a, b: 3 facts retired", "#1–#3 a: ; 3 facts retired", "#1–#3 a: x; 1 fact retired",
		"#1–#3 a: x 12 facts retired", "#1–#3 a: x;12 facts retired", "#1–#3 a: x; ; 2 facts retired", "#1–#3 a: 1; 2 facts retired", "#1–#3 a: x; 2 facts  retired",
		"#1–#3 a: x; 2 fact retired", "#1–#3 a: x; 99999999999999999999 facts retired", "#1–#3 a: x; 2 facts retired ", "#1–#3 a: x\xff; 2 facts retired",
		"- #3 user: hello", "* #3 user: hello", "• #3 user: hello", " \t-•* #3 user:   hello  there ", "#3 user:hello", "#3 user:\t", "1. #3 user: x",
		"#3 user: a: b: c", "#3 us:er: x", "#3 é: ü", "#3 a\r: b\r",
	} {
		add(l)
	}
	base := append([]string(nil), lines...)
	bends := []func(string, int) string{
		func(l string, k int) string { return l[:k%(len(l)+1)] },
		func(l string, k int) string { i := k % (len(l) + 1); return l[:i] + ":" + l[i:] },
		func(l string, k int) string { i := k % (len(l) + 1); return l[:i] + " " + l[i:] },
		func(l string, k int) string { i := k % (len(l) + 1); return l[:i] + "–#" + l[i:] },
		func(l string, k int) string { return "  " + l + " " },
		func(l string, k int) string { return "- " + l },
		func(l string, k int) string { return l + "; " + strconv.Itoa(k) + " facts retired" },
	}
	for k, l := range base {
		for j, bend := range bends {
			add(bend(l, k*7+j*3))
		}
	}
	return lines
}

func TestLineReadersMatchTheRegexps(t *testing.T) {
	t.Parallel()
	lines := lineCorpus(t)
	for _, l := range lines {
		for _, line := range []string{l, strings.TrimSpace(l)} {
			got, gotOK := parseLine(line)
			want, wantOK := specParseLine(line)
			if gotOK != wantOK || !reflect.DeepEqual(got, want) {
				t.Fatalf("parseLine(%q) = %+v %v, the regexps read %+v %v", line, got, gotOK, want, wantOK)
			}
			if h, ok := readLineHead(line); (ok && h.valid()) != wantOK || wantOK && (h.from != want.from || h.to != want.to) {
				t.Fatalf("readLineHead(%q) = %+v %v, the regexps read %+v %v", line, h, ok, want, wantOK)
			}
			if wantOK {
				if got.render() != specRender(got) || got.size() != utf8.RuneCountInString(specRender(got)) {
					t.Fatalf("%+v renders %q (%d runes), want %q", got, got.render(), got.size(), specRender(got))
				}
			}
		}
		if got, want := oneLine(l), strings.Join(strings.Fields(l), " "); got != want {
			t.Fatalf("oneLine(%q) = %q, want %q", l, got, want)
		}
		for _, n := range []int{0, 1, 5, gistCap, lineCap} {
			if got, want := clipTo(l, n), specClipTo(l, n); got != want {
				t.Fatalf("clipTo(%q, %d) = %q, want %q", l, n, got, want)
			}
		}
	}
	// Answers and transcripts: the corpus in blocks, as one text each.
	for i := 0; i < len(lines); i += 17 {
		text := strings.Join(lines[i:min(i+17, len(lines))], "\n")
		if got, want := answerLines(text), specAnswerLines(text); !reflect.DeepEqual(got, want) {
			t.Fatalf("answerLines(%q) = %v, want %v", text, got, want)
		}
		if got, want := summaryAnswer(text), specSummaryAnswer(text); got != want {
			t.Fatalf("summaryAnswer(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestSizesAndSpeakerUnionsMatchTheirSpecs(t *testing.T) {
	t.Parallel()
	for _, e := range []entry{
		{from: 1, to: 1, speakers: []string{"user"}, text: "héllo …"},
		{from: -12, to: -12, speakers: []string{"x"}, text: ""},
		{from: 7, to: 1234567, speakers: []string{"a", "b"}, text: "began \"x\"", phase: true, retired: 1},
		{from: 1, to: 2, speakers: []string{"a"}, text: "", phase: true, retired: 12},
		{from: 1, to: 2, speakers: []string{strings.Repeat("executor[t-1-order], ", 10)}, text: "x", phase: true, retired: -3},
		{from: 1, to: 2, speakers: []string{"a"}, text: "; x", phase: true, retired: 2},
		{from: 1, to: 2, speakers: []string{"a"}, text: ";", phase: true, retired: 1},
		{from: 1, to: 2, speakers: []string{"a"}, text: "é; x", phase: true},
		{from: 1, to: 2, speakers: nil, text: "x", phase: true, retired: 3},
		{from: 1, to: 9, speakers: strings.Split("user executor[t-1-order] executor[t-2-shipping] executor[t-3-refund] tool[lookup_order] tool[shipping_events] critic reply planner", " "), text: "x", phase: true, retired: 3},
	} {
		if e.render() != specRender(e) || e.size() != utf8.RuneCountInString(specRender(e)) {
			t.Errorf("%+v renders %q (%d runes), want %q", e, e.render(), e.size(), specRender(e))
		}
	}
	for _, n := range []int{0, 9, 10, -1, -9, -10, 1 << 62, -1 << 63} {
		if digits(n) != len(strconv.Itoa(n)) {
			t.Errorf("digits(%d) = %d", n, digits(n))
		}
	}
	lists := [][]string{nil, {"user"}, {"user", "user"}, {"executor[…]"}, {"executor[t-1]", "executor[…]"}, {"executor[t-1]", "critic", "executor[t-2]"}, {"[x]", "[…]"}, {"a[b", "a[…]"}}
	for _, a := range lists {
		for _, b := range lists {
			got, want := unionSpeakers(a, b), specUnionSpeakers(a, b)
			if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
				t.Errorf("unionSpeakers(%q, %q) = %q, want %q", a, b, got, want)
			}
		}
	}
}

// The gate reads a candidate as strings.Split would: an empty line, last
// or not, is a line without coordinates.
func TestCheckSummaryReadsEveryLine(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"#1 user: a\n", "#1 user: a\n\n", "\n#1 user: a", "#1 user: a\n\n#2 user: b"} {
		if err := CheckSummary(text, 1, strings.Count(text, "#")); err == nil || !strings.Contains(err.Error(), "has no #index") {
			t.Errorf("CheckSummary(%q) = %v", text, err)
		}
	}
	if err := CheckSummary("#1 user: a\n#2–#3 x: b", 1, 3); err != nil {
		t.Error(err)
	}
}
