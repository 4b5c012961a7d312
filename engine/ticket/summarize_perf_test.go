package ticket

import (
	"context"
	"rewind/engine/event"
	"testing"
	"unicode/utf8"

	"rewind/engine"
	"rewind/store/memory"
)

// compactCase is one realistic compaction: a previous summary near the
// budget, the head the next turn hands over and the mock's answer for it.
type compactCase struct {
	prev   *Summary
	head   []Message
	answer string
}

// nearBudgetCase drives simulated turns until a compaction's previous
// summary is within 10% of the budget and its head is 14 to 20 messages,
// as the ticket graph hands over, and returns that compaction.
func nearBudgetCase(tb testing.TB) compactCase {
	tb.Helper()
	var (
		ms   []Message
		sum  *Summary
		next = 1
	)
	for turn := 0; turn < 200; turn++ {
		for _, m := range simTurn(turn) {
			m.Index = next
			next++
			ms = append(ms, m)
		}
		if NeedsSummary(ms, sum) == "" || Cut(ms) == 0 {
			continue
		}
		head := ms[:Cut(ms)]
		c := compactCase{prev: sum, head: head, answer: summaryAnswer(Transcript(head))}
		if turn > 20 && sum != nil && utf8.RuneCountInString(sum.Text) > SummaryBudget*9/10 && len(head) >= 14 && len(head) <= 20 {
			return c
		}
		s, _, err := Compact(sum, head, c.answer)
		if err != nil {
			tb.Fatal(err)
		}
		sum, ms = &s, ms[len(head):]
	}
	tb.Fatal("no compaction near the budget")
	return compactCase{}
}

// BenchmarkCompact is one compaction as the summarizer node makes it.
func BenchmarkCompact(b *testing.B) {
	c := nearBudgetCase(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Compact(c.prev, c.head, c.answer); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSummarizerCall is the rest of a compacting turn's summarizer
// work around Compact: the transcript and the mock's answer.
func BenchmarkSummarizerCall(b *testing.B) {
	c := nearBudgetCase(b)
	b.ReportAllocs()
	for b.Loop() {
		summaryAnswer(Transcript(c.head))
	}
}

// summarizerInputs runs turns of the ticket graph and returns the state
// the summarizer saw in each, and whether it compacted there.
func summarizerInputs(tb testing.TB, turns int) (values []engine.Values, compacts []bool) {
	tb.Helper()
	ctx := context.Background()
	e, err := engine.New(memory.New(), NewGraph(), NewMock())
	if err != nil {
		tb.Fatal(err)
	}
	for turn := 0; turn < turns; turn++ {
		if _, err := e.Run(ctx, "long", Input(sentenceFor(turn)), engine.RunConfig{}); err != nil {
			tb.Fatal(err)
		}
	}
	cps, err := e.History(ctx, "long", 0, 0)
	if err != nil {
		tb.Fatal(err)
	}
	for _, cp := range cps {
		for _, t := range cp.Tasks {
			if t.Node != NodeSummarizer {
				continue
			}
			full, err := e.Get(ctx, "long", cp.ID)
			if err != nil {
				tb.Fatal(err)
			}
			s, err := Decode(full.Values)
			if err != nil {
				tb.Fatal(err)
			}
			values = append(values, full.Values)
			compacts = append(compacts, NeedsSummary(s.Messages, s.Summary) != "" && Cut(s.Messages) > 0)
		}
	}
	if len(values) < turns {
		tb.Fatalf("the summarizer ran %d times in %d turns", len(values), turns)
	}
	return values, compacts
}

// BenchmarkSummarizerNode is the summarizer node's work on the states of
// 60 turns of a long thread, the mock answering: Turn is the average over
// them, Quiet the turns it only measures, Compacting the others.
func BenchmarkSummarizerNode(b *testing.B) {
	values, compacts := summarizerInputs(b, 60)
	values, compacts = values[20:], compacts[20:] // past the first summaries: near the budget
	mock := NewMock()
	emit := func(event.Payload) {}
	for _, kind := range []struct {
		name string
		keep func(compacts bool) bool
	}{
		{"Turn", func(bool) bool { return true }},
		{"Quiet", func(c bool) bool { return !c }},
		{"Compacting", func(c bool) bool { return c }},
	} {
		var vs []engine.Values
		for i, v := range values {
			if kind.keep(compacts[i]) {
				vs = append(vs, v)
			}
		}
		b.Run(kind.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := summarize(ctx, vs[i%len(vs)], mock, "long", emit); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
