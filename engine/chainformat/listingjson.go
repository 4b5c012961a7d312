package chainformat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"rewind/engine/internal/jsonstr"
)

// A listing of format 3 is stored as a JSON array, its fields by position
// (listingFields), the empty ones at the end left off and the others
// written as 0; a listing written before is an object (the json tags of
// listing), which reads as it always did. Position 20 is the storage
// format of the row's state document, left off while it is 3: a document
// of format 3 does not say it (stateDoc.Format). The running totals of a
// turn's first checkpoint follow it (21-23: SumTurns, SumThread,
// SumBranch), written since; a rewind before them skips them as a newer
// rewind's fields, and a listing without them reads as none. Position 24
// marks a run's first checkpoint (listing.Run); a listing without it
// belongs to its parent's run, or to none (stored before runs were).
// Position 25 is a failed run's fixes (listing.Fixes), by action name;
// a listing without it has none. Position 26 names the graph that wrote
// a run's first checkpoint (listing.Graph), beside its run mark; the
// run's later checkpoints are its graph's too, and a thread none of whose
// marked listings names one was stored before graphs were recorded.

// listingObject is a listing as an object, as listings were stored before.
type listingObject listing

// listingFields are the positions of a stored listing.
func (l *listing) listingFields() []any {
	return []any{&l.Step, &l.SchemaVersion, &l.Depth, &l.Messages, &l.Row, &l.Bytes, &l.Tokens, &l.Next, &l.Events, &l.Status,
		&l.Source, &l.Nodes, &l.ModelCalls, &l.Interrupt, &l.ForkedFrom, &l.Replay, &l.AsNode, &l.Reused, &l.Reason, &l.OldTokens, &l.format,
		&l.SumTurns, &l.SumThread, &l.SumBranch, &l.Run, &l.Fixes, &l.Graph}
}

func (l listing) MarshalJSON() ([]byte, error) {
	if l.format == 3 {
		l.format = 0
	}
	buf := make([]byte, 1, 160)
	buf[0] = '['
	end := len(buf) // after the last field that is not zero
	for i, f := range l.listingFields() {
		if i > 0 {
			buf = append(buf, ',')
		}
		at := len(buf)
		var err error
		if buf, err = appendListingField(buf, f); err != nil {
			return nil, err
		}
		switch string(buf[at:]) {
		case "0", `""`, "null", "false", "[]", "{}":
			buf = append(buf[:at], '0')
		default:
			end = len(buf)
		}
	}
	return append(buf[:end], ']'), nil
}

// appendListingField appends f as json.Marshal writes it, the common
// types without reflection (a listing is written twice a checkpoint).
func appendListingField(buf []byte, f any) ([]byte, error) {
	switch x := f.(type) {
	case *int:
		return strconv.AppendInt(buf, int64(*x), 10), nil
	case *int64:
		return strconv.AppendInt(buf, *x, 10), nil
	case *bool:
		return strconv.AppendBool(buf, *x), nil
	case *string:
		return jsonstr.Append(buf, *x), nil
	case *[]string:
		if *x == nil {
			return append(buf, "null"...), nil
		}
		buf = append(buf, '[')
		for i, s := range *x {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = jsonstr.Append(buf, s)
		}
		return append(buf, ']'), nil
	case *map[string]int:
		return appendCounts(buf, *x, func(buf []byte, n int) []byte { return strconv.AppendInt(buf, int64(n), 10) }), nil
	case *map[string][3]int:
		return appendCounts(buf, *x, func(buf []byte, ns [3]int) []byte {
			for j, n := range ns {
				buf = append(buf, "[,"[min(j, 1)]) // [ before the first, , between
				buf = strconv.AppendInt(buf, int64(n), 10)
			}
			return append(buf, ']')
		}), nil
	}
	b, err := json.Marshal(f)
	return append(buf, b...), err
}

func (l *listing) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '[' {
		return json.Unmarshal(b, (*listingObject)(l))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return err
	}
	*l = listing{}
	defer func() {
		if l.format == 0 {
			l.format = 3
		}
	}()
	fields := l.listingFields()
	for i, raw := range items {
		if i >= len(fields) {
			break // a newer rewind's field
		}
		switch string(raw) {
		case "0", `""`, "null", "false":
			continue
		}
		if n, ok := fields[i].(*int); ok {
			v, err := strconv.Atoi(string(raw))
			if err != nil {
				return fmt.Errorf("listing field %d: %s is not a whole number", i, raw)
			}
			*n = v
			continue
		}
		if err := json.Unmarshal(raw, fields[i]); err != nil {
			return fmt.Errorf("listing field %d: %w", i, err)
		}
	}
	return nil
}

// A write group of format 3 is stored as [node, task, writes, calls, ms,
// refs]: task is the packet number (writeGroup.Packet), the id, or null
// for none; calls, ms and refs are left off when there are none (calls and
// ms written as 0 before a refs). A group written before is an object,
// which reads as it always did.

type writeGroupObject writeGroup

func (g writeGroup) MarshalJSON() ([]byte, error) {
	var task any
	switch {
	case g.Packet != nil:
		task = *g.Packet
	case g.Task != "":
		task = g.Task
	}
	writes := g.Writes
	if writes == nil {
		writes = []storedWrite{}
	}
	v := []any{g.Node, task, writes, g.Calls, g.Ms, g.Refs}
	if g.Calls == nil {
		v[3] = 0
	}
	n := len(v)
	for n > 3 && (n == 6 && len(g.Refs) == 0 || n == 5 && g.Ms == 0 || n == 4 && len(g.Calls) == 0) {
		n--
	}
	return json.Marshal(v[:n])
}

func (g *writeGroup) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '[' {
		return json.Unmarshal(b, (*writeGroupObject)(g))
	}
	var v []json.RawMessage
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if len(v) < 3 {
		return fmt.Errorf("a stored write group is not [node, task, writes, …]")
	}
	*g = writeGroup{}
	if err := json.Unmarshal(v[0], &g.Node); err != nil {
		return fmt.Errorf("a stored write group's node: %w", err)
	}
	switch t := bytes.TrimSpace(v[1]); {
	case len(t) > 0 && t[0] == '"':
		if err := json.Unmarshal(t, &g.Task); err != nil {
			return err
		}
	case string(t) != "null":
		k, err := strconv.Atoi(string(t))
		if err != nil {
			return fmt.Errorf("a stored write group's task is %s", t)
		}
		g.Packet = &k
	}
	if err := json.Unmarshal(v[2], &g.Writes); err != nil {
		return err
	}
	if len(v) > 3 && string(v[3]) != "0" {
		if err := json.Unmarshal(v[3], &g.Calls); err != nil {
			return err
		}
	}
	if len(v) > 4 {
		if err := json.Unmarshal(v[4], &g.Ms); err != nil {
			return err
		}
	}
	if len(v) > 5 {
		if err := json.Unmarshal(v[5], &g.Refs); err != nil {
			return err
		}
	}
	return nil
}

// appendCounts appends m as json.Marshal writes a map: null when nil, keys
// sorted, each value by value.
func appendCounts[V any](buf []byte, m map[string]V, value func([]byte, V) []byte) []byte {
	if m == nil {
		return append(buf, "null"...)
	}
	buf = append(buf, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = value(append(jsonstr.Append(buf, k), ':'), m[k])
	}
	return append(buf, '}')
}
