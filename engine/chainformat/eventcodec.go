package chainformat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"rewind/store"
)

// An event's stored payload (format 3) keeps its time as UTC nanoseconds
// (a number, not RFC 3339 text), and data with a run of four or more
// consecutive whole numbers in a list (a compaction's source indices) as
// "d", each run written {"$r": [first, count]}. Data with "$r" anywhere
// is stored as it is, under "data"; payloads written before read as ever.

type storedEvent struct {
	// Run is the id of the run that emitted it (Event.Run).
	Run  string          `json:"r,omitempty"`
	Node string          `json:"node,omitempty"`
	Task string          `json:"task,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
	Runs json.RawMessage `json:"d,omitempty"`
	At   eventTime       `json:"at"`
}

type eventTime struct{ time.Time }

func (t eventTime) MarshalJSON() ([]byte, error) {
	if t.Location() != time.UTC || t.Year() < 1700 || t.Year() > 2200 {
		return t.Time.MarshalJSON()
	}
	return []byte(fmt.Sprint(t.UnixNano())), nil
}

func (t *eventTime) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] != '"' {
		var n int64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("an event's time is %s", b)
		}
		t.Time = time.Unix(0, n).UTC()
		return nil
	}
	return t.Time.UnmarshalJSON(b)
}

func (ev Event) stored() ([]byte, error) {
	p := storedEvent{Run: ev.Run, Node: ev.Node, Task: ev.Task, Data: ev.Data, At: eventTime{ev.At}}
	if runs := packRuns(ev.Data); runs != nil {
		p.Data, p.Runs = nil, runs
	}
	return json.Marshal(p)
}

// data is the event's data as it was emitted.
func (p storedEvent) data() (json.RawMessage, error) {
	if p.Runs == nil {
		return p.Data, nil
	}
	v, err := decodeAny(p.Runs)
	if err != nil {
		return nil, err
	}
	return json.Marshal(unpackRuns(v))
}

var markRun = []byte(`"$r"`)

// packRuns is data with its runs packed, or nil when it has none (or
// would not read back byte for byte).
func packRuns(data json.RawMessage) json.RawMessage {
	if len(data) == 0 || bytes.Contains(data, markRun) || bytes.Contains(data, markEscapedDollar) {
		return nil
	}
	v, err := decodeAny(data)
	if err != nil {
		return nil
	}
	packed, found := packValue(v)
	if !found {
		return nil
	}
	out, err := json.Marshal(packed)
	if err != nil {
		return nil
	}
	back, err := storedEvent{Runs: out}.data()
	if err != nil || !bytes.Equal(back, data) || len(out) >= len(data) {
		return nil
	}
	return out
}

func packValue(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		found := false
		for k, e := range x {
			var f bool
			x[k], f = packValue(e)
			found = found || f
		}
		return x, found
	case []any:
		var out []any
		found := false
		for i := 0; i < len(x); {
			j := i
			for j+1 < len(x) && isNext(x[j], x[j+1]) {
				j++
			}
			if j-i+1 >= 4 {
				out = append(out, map[string]any{"$r": []any{x[i], j - i + 1}})
				found, i = true, j+1
				continue
			}
			e, f := packValue(x[i])
			out = append(out, e)
			found = found || f
			i++
		}
		if out == nil {
			out = []any{}
		}
		return out, found
	}
	return v, false
}

// isNext says b is the whole number after a.
func isNext(a, b any) bool {
	x, ok1 := a.(json.Number)
	y, ok2 := b.(json.Number)
	if !ok1 || !ok2 {
		return false
	}
	m, err1 := x.Int64()
	n, err2 := y.Int64()
	return err1 == nil && err2 == nil && n == m+1 && string(x) == fmt.Sprint(m) && string(y) == fmt.Sprint(n)
}

func unpackRuns(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = unpackRuns(e)
		}
		return x
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			if m, ok := e.(map[string]any); ok && len(m) == 1 {
				if r, ok := m["$r"].([]any); ok && len(r) == 2 {
					first, err1 := r[0].(json.Number).Int64()
					count, err2 := r[1].(json.Number).Int64()
					if err1 == nil && err2 == nil && count > 0 && count < 1<<20 {
						for k := range count {
							out = append(out, json.Number(fmt.Sprint(first+k)))
						}
						continue
					}
				}
			}
			out = append(out, unpackRuns(e))
		}
		return out
	}
	return v
}

// Event is something that happened during a run.
type Event struct {
	Thread     string          `json:"thread"`
	Checkpoint int64           `json:"checkpoint"`
	Seq        int             `json:"seq,omitempty"`
	Type       string          `json:"type"`
	Node       string          `json:"node,omitempty"`
	Task       string          `json:"task,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
	At         time.Time       `json:"at"`
	// Run is the id of the run that emitted it (RunMark.ID): a reused
	// task's events keep the run that ran the task. Empty for events
	// stored before runs were recorded.
	Run string `json:"run,omitempty"`
}

// EventModelCalled is the type of a model call's event (engine's
// EventModelCalled), which a write group keeps as a stored call.
const EventModelCalled = "model.called"

// StatusRunning is the run status a listing of a loop checkpoint leaves
// out (engine's RunRunning).
const StatusRunning = "running"

func threadName(thread string) store.Name { return store.Name(thread) }
