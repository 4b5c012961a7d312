package telemetry

import (
	"slices"

	"rewind/engine"
	"rewind/engine/event"
)

// Stats are the counters a thread's stored events give, under the names
// of the metrics a collector receives live (`rewind stats`). What a
// refusal leaves nowhere (a fence, a late write refused, a run refused
// because another process held the thread) is counted live only: it
// changes nothing, so nothing of it is stored.
type Stats struct {
	Threads int `json:"threads"`
	Events  int `json:"events"`
	// Runs are the turns started (an input, or a fork with input or a
	// replay) and the stored ends of runs that failed or were cancelled.
	Runs RunStats `json:"runs"`
	// Conflicts are resumes that found a record changed under the run
	// (resume.rechecked).
	Conflicts           int `json:"conflicts"`
	SideEffectsBlocked  int `json:"sideEffectsBlocked"`
	CompactionsRejected int `json:"compactionsRejected"`
	// CompactionsSkipped are summary calls that failed: the compaction
	// waited for a later turn.
	CompactionsSkipped int        `json:"compactionsSkipped"`
	Model              ModelStats `json:"model"`
}

// RunStats count turns and their stored endings.
type RunStats struct {
	Turns     int `json:"turns"`
	Inputs    int `json:"inputs"`
	Forks     int `json:"forks"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	// All counts every run that stored an event, by its id: turns,
	// resumes, answers, replays (runs stored before run ids were kept
	// are not in it).
	All int `json:"all"`
	ids map[string]bool
}

// ModelStats are the stored model calls, by role.
type ModelStats struct {
	Calls        map[string]int    `json:"calls"`
	Errors       map[string]int    `json:"errors"`
	InputTokens  map[string]int    `json:"inputTokens"`
	OutputTokens map[string]int    `json:"outputTokens"`
	DurationMs   DurationQuantiles `json:"durationMs"`
	durations    []int64
}

// DurationQuantiles summarize the calls' latencies (milliseconds).
type DurationQuantiles struct {
	P50   int64 `json:"p50"`
	P95   int64 `json:"p95"`
	Max   int64 `json:"max"`
	Total int64 `json:"total"`
}

// NewStats is an empty count.
func NewStats() *Stats {
	return &Stats{Model: ModelStats{Calls: map[string]int{}, Errors: map[string]int{}, InputTokens: map[string]int{}, OutputTokens: map[string]int{}}}
}

// Add counts one thread's stored events. An event whose data does not
// decode is counted by its type alone (its figures are unknown).
func (s *Stats) Add(events []engine.Event) {
	s.Threads++
	s.Events += len(events)
	for _, ev := range events {
		if ev.Run != "" {
			if s.Runs.ids == nil {
				s.Runs.ids = map[string]bool{}
			}
			s.Runs.ids[ev.Run] = true
		}
		switch ev.Type {
		case event.TypeInput:
			s.Runs.Turns++
			s.Runs.Inputs++
		case event.TypeFork:
			s.Runs.Turns++
			s.Runs.Forks++
		case event.TypeRunFailed:
			// A node's Fail and the checkpoint that ends the run both
			// store one: count the run's end (Discarded set) only.
			if d, err := event.Decode[event.RunFailed](ev.Type, ev.Data); err != nil || d.Discarded != nil {
				s.Runs.Failed++
			}
		case event.TypeRunCancelled:
			s.Runs.Cancelled++
		case event.TypeRechecked:
			s.Conflicts++
		case event.TypeBlocked:
			s.SideEffectsBlocked++
		case event.TypeCompactionRejected:
			s.CompactionsRejected++
		case event.TypeCompactionSkipped:
			s.CompactionsSkipped++
		case event.TypeModelCalled:
			s.modelCalled(ev)
		}
	}
	s.Model.DurationMs = quantiles(s.Model.durations)
	s.Runs.All = len(s.Runs.ids)
}

func (s *Stats) modelCalled(ev engine.Event) {
	d, err := event.Decode[event.ModelCalled](ev.Type, ev.Data)
	if err != nil {
		s.Model.Calls["?"]++
		return
	}
	m := &s.Model
	m.Calls[d.Role]++
	if d.Error != "" {
		m.Errors[d.Role]++
	}
	m.InputTokens[d.Role] += d.PromptTokens
	m.OutputTokens[d.Role] += d.CompletionTokens
	m.durations = append(m.durations, d.DurationMs)
}

func quantiles(ms []int64) DurationQuantiles {
	if len(ms) == 0 {
		return DurationQuantiles{}
	}
	sorted := slices.Sorted(slices.Values(ms))
	var q DurationQuantiles
	for _, v := range sorted {
		q.Total += v
	}
	at := func(p float64) int64 { return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))] }
	q.P50, q.P95, q.Max = at(0.5), at(0.95), sorted[len(sorted)-1]
	return q
}

// Sum is the total of a map of counts.
func Sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
