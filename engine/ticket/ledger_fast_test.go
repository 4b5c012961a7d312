package ticket

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// appendFacts keeps a ledger's unchanged pages as they are stored and
// encodes only what it appends; whatever the ledger and the write, it must
// give the bytes encoding/json gives (appendFactsSlow), or a replayed
// checkpoint would read otherwise than the one stored.
func TestAppendFactsFastAgreesWithSlow(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 2))
	plain := []string{"DL20261003", "CO-0103;", "signed by J. Devries", "2 hours", `say "yes"`, `back\slash`,
		"tab\there", "two\nlines", "  spaced  out  ", "été – ok", "#21 user:", ""}
	special := []string{"a <b> & c", "\u2028sep", "bad\xffbyte", "\x01ctl", "\ufffd"}
	line := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			if rng.IntN(60) == 0 {
				b.WriteString(special[rng.IntN(len(special))])
			} else {
				b.WriteString(plain[rng.IntN(len(plain))])
			}
			b.WriteByte(' ')
		}
		if rng.IntN(40) == 0 {
			b.WriteString(strings.Repeat("x", 3000+rng.IntN(2000)))
		}
		return b.String()
	}
	write := func() json.RawMessage {
		lines := make([]string, rng.IntN(5))
		for i := range lines {
			lines[i] = line()
		}
		w, _ := json.Marshal(lines)
		return w
	}
	// Ledgers as json.Marshal wrote them, and as other writers might
	// have: white space, escapes Marshal does not use, null, bad JSON.
	starts := []string{"", "null", "[]", " [ ] ", `["a\u0062c"]`, `["a", "b"]`, `["x\/y"]`, `[1]`, `["a"`, `["a",]`, `{"a":1}`,
		`["retired: the facts of #1–#7 are retired","p1","p2","p3","p4"]`, `["retired: the facts of #1–#0 x","p1","p2","p3","p4"]`,
		`["retired: the facts of #1–#","p1","p2","p3","p4"]`, `["p0","p1","p2","p3","p4","p5"]`, `["\u003c"]`, `["caf\u00e9"]`, `["a<b"]`, `["a&b>"]`, `["x\ty"]`, "[\"a\u2028b\"]", "[\"bad\xff\"]"}
	fast, slow := 0, 0
	for _, start := range starts {
		for run := range 40 {
			var cur json.RawMessage
			if start != "" {
				cur = json.RawMessage(start)
			}
			for step := range 30 {
				w := write()
				if run%7 == 0 && step == 3 {
					w = json.RawMessage(`["ok", 2]`) // a bad write
				}
				var lines []string
				badWrite := json.Unmarshal(w, &lines) != nil
				want, wantErr := appendFactsSlow(cur, lines)
				if badWrite {
					want, wantErr = nil, fmt.Errorf("bad write")
				}
				if _, ok := ledgerPages(cur); ok {
					fast++
				} else {
					slow++
				}
				got, err := appendFacts(cur, w)
				if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
					t.Fatalf("from %q after %d writes, write %s:\n got %s (%v)\nwant %s (%v)", start, step, w, got, err, want, wantErr)
				}
				if err != nil {
					break
				}
				cur = got
			}
		}
	}
	t.Logf("%d fast, %d slow", fast, slow)
	if fast < 1000 || slow < 1000 {
		t.Fatalf("%d fast and %d slow reductions: the cases no longer try both paths", fast, slow)
	}
}

// A replay reduces every facts write of the chain it rebuilds.
//
//	go test -run x -bench AppendFacts -count 6 ./engine/ticket
func BenchmarkAppendFacts(b *testing.B) {
	var cur json.RawMessage = json.RawMessage("[]")
	n := 0
	w := func() json.RawMessage {
		n++
		v, _ := json.Marshal([]string{fmt.Sprintf("#%d user: DL2026%04d; BT-%05d; 3.%02d m", n, n, 10000+n, n%100)})
		return v
	}
	for range 600 { // a full ledger: FactPagesKept pages and a marker
		cur, _ = appendFacts(cur, w())
	}
	write := w()
	for _, f := range []struct {
		name string
		f    func(json.RawMessage, json.RawMessage) (json.RawMessage, error)
	}{{"fast", appendFacts}, {"slow", func(c, w json.RawMessage) (json.RawMessage, error) {
		var lines []string
		_ = json.Unmarshal(w, &lines)
		return appendFactsSlow(c, lines)
	}}} {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(int64(len(cur)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.f(cur, write); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A facts write's lines read without reflection are encoding/json's, and
// a list it cannot read plainly goes to encoding/json.
func TestPlainLinesAgreeWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`[]`, `["a","b c"]`, ` [ "a" , "b" ] `, `["été – ok 🙂"]`, `["say \"yes\""]`, `["a\nb"]`,
		"[\"tab\there\"]", `["bad` + "\xff" + `"]`, `["a",]`, `[,"a"]`, `["a" "b"]`, `["a"`, `[1]`, `null`, `{}`, "\u00a0[\"a\"]",
		`["<&>"]`, `[""]`, `["a"]x`} {
		lines, ok := plainLines([]byte(in))
		if !ok {
			continue
		}
		var ref []string
		if err := json.Unmarshal([]byte(in), &ref); err != nil || !slices.Equal(lines, ref) || ref == nil {
			t.Errorf("plainLines(%q) = %q; encoding/json reads %q (%v)", in, lines, ref, err)
		}
	}
}
