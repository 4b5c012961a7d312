package bench

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"rewind/engine"
	"rewind/store"
)

// Floor keeps rows as a bare program would (store/sqlite/floor,
// store/postgres/floor): the bench hands it each turn's rows after the
// turn, in the order the engine stored them, and times that apart.
type Floor interface {
	Checkpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) error
	Writes(ctx context.Context, w store.TaskWrites) error
	// Sync makes the turn's commits as durable as the store made them.
	Sync() error
}

// recorder keeps what the engine stored during one turn (engine.Stored).
type recorder struct {
	mu  sync.Mutex
	ops []stored
}

// stored is one store call: a checkpoint with its events, or a task's
// writes.
type stored struct {
	cp     *store.Checkpoint
	events []store.Event
	writes *store.TaskWrites
}

func (r *recorder) CheckpointStored(cp store.Checkpoint, events []store.Event) {
	cp.Meta, cp.State, cp.Head = bytes.Clone(cp.Meta), bytes.Clone(cp.State), bytes.Clone(cp.Head)
	cp.BlobRefs = slices.Clone(cp.BlobRefs)
	cp.Messages = slices.Clone(cp.Messages)
	for i := range cp.Messages {
		cp.Messages[i].Body = bytes.Clone(cp.Messages[i].Body)
	}
	cp.Blobs = slices.Clone(cp.Blobs)
	for i := range cp.Blobs {
		cp.Blobs[i].Body = bytes.Clone(cp.Blobs[i].Body)
	}
	events = slices.Clone(events)
	for i := range events {
		events[i].Payload = bytes.Clone(events[i].Payload)
	}
	r.mu.Lock()
	r.ops = append(r.ops, stored{cp: &cp, events: events})
	r.mu.Unlock()
}

func (r *recorder) WritesStored(w store.TaskWrites) {
	w.Writes = bytes.Clone(w.Writes)
	r.mu.Lock()
	r.ops = append(r.ops, stored{writes: &w})
	r.mu.Unlock()
}

// stored is r as the engine's engine.Stored: nil (nobody told) for no
// recorder.
func (r *recorder) stored() engine.Stored {
	if r == nil {
		return nil
	}
	return r
}

// replay writes the turn's rows into f, one commit per store call as the
// store took them, then syncs: its time and CPU time. The recorder is
// empty after.
func (r *recorder) replay(ctx context.Context, f Floor) (took time.Duration, cpu int64, err error) {
	r.mu.Lock()
	ops := r.ops
	r.ops = nil
	r.mu.Unlock()
	cpu, start := cpuTime(), time.Now()
	for _, op := range ops {
		if op.cp != nil {
			err = f.Checkpoint(ctx, *op.cp, op.events)
		} else {
			err = f.Writes(ctx, *op.writes)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("bench: the floor: %w", err)
		}
	}
	if err := f.Sync(); err != nil {
		return 0, 0, fmt.Errorf("bench: the floor: %w", err)
	}
	return time.Since(start), cpuTime() - cpu, nil
}

// FloorSpan is turns From…To against the floor: the medians of a turn's
// time and CPU time and of the floor's for the same rows, and their
// ratios.
type FloorSpan struct {
	From       int     `json:"from"`
	To         int     `json:"to"`
	Ms         float64 `json:"ms"`
	CPUMs      float64 `json:"cpuMs"`
	FloorMs    float64 `json:"floorMs"`
	FloorCPUMs float64 `json:"floorCpuMs"`
	// Times and CPUTimes are Ms over FloorMs and CPUMs over FloorCPUMs.
	Times    float64 `json:"times"`
	CPUTimes float64 `json:"cpuTimes"`
}

// FloorReport compares the turns with the floor in the slope's windows.
type FloorReport struct {
	Early FloorSpan `json:"early"`
	Late  FloorSpan `json:"late"`
}

func (r Report) floor() *FloorReport {
	s := r.slope()
	if s.Early.To == 0 {
		s.Early.From, s.Early.To = 1, len(r.Turns)
		s.Late = s.Early
	}
	return &FloorReport{Early: r.floorSpan(s.Early.From, s.Early.To), Late: r.floorSpan(s.Late.From, s.Late.To)}
}

func (r Report) floorSpan(lo, hi int) FloorSpan {
	w := FloorSpan{From: lo, To: hi}
	var ms, cpu, fms, fcpu []float64
	for _, t := range r.Turns[lo-1 : hi] {
		ms, cpu, fms, fcpu = append(ms, t.Ms), append(cpu, t.CPUMs), append(fms, t.FloorMs), append(fcpu, t.FloorCPUMs)
	}
	w.Ms, w.CPUMs, w.FloorMs, w.FloorCPUMs = Median(ms), Median(cpu), Median(fms), Median(fcpu)
	if w.FloorMs > 0 {
		w.Times = w.Ms / w.FloorMs
	}
	if w.FloorCPUMs > 0 {
		w.CPUTimes = w.CPUMs / w.FloorCPUMs
	}
	return w
}
