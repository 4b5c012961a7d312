// Package valuediff says how two checkpoints' channel values differ, in
// a few words and in unified-diff lines, for a person to read (`diff`,
// the TUI's diff pane). Lists of objects are matched by "index" or "id",
// so an append shows as additions and a wholesale replace shows what was
// dropped. It reads JSON values only and imports nothing of rewind's.
package valuediff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Channel is how one channel changed between two checkpoints.
type Channel struct {
	Channel string `json:"channel"`
	// Summary says what changed in a few words ("+3 (#12–#14)").
	Summary string `json:"summary"`
	// Lines are unified-diff style: "+ item", "- item". They hold stored
	// text as it is: sanitise before printing.
	Lines []string `json:"lines"`
	// More is how many lines were left out.
	More int `json:"more,omitempty"`
}

const (
	maxDiffLinesPerChannel = 120
	maxDiffItemChars       = 1500
)

// Channels compares two checkpoints' channel values (any two: a parent and its
// child, or checkpoints of different branches). Lists of objects are
// matched by their "index" (messages) or "id" (subtasks, attachments) so an
// append shows as additions and a wholesale replace shows what was dropped.
func Channels(parent, cur map[string]json.RawMessage) []Channel {
	names := map[string]bool{}
	for k := range parent {
		names[k] = true
	}
	for k := range cur {
		names[k] = true
	}
	keys := slices.Sorted(maps.Keys(names))
	var out []Channel
	for _, ch := range keys {
		a, b := parent[ch], cur[ch]
		if bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b)) {
			continue
		}
		av, bv := decodeLoose(a), decodeLoose(b)
		if reflect.DeepEqual(av, bv) || (av == nil && isEmpty(bv)) || (bv == nil && isEmpty(av)) {
			continue
		}
		out = append(out, diffChannel(ch, av, bv))
	}
	return out
}

// isEmpty: an empty list or map is no news next to a missing channel.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func decodeLoose(raw json.RawMessage) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return string(raw)
	}
	return v
}

// diffChannel is how channel ch changed from a to b (decoded loosely).
func diffChannel(ch string, a, b any) Channel {
	cd := &lines{Channel: Channel{Channel: ch}}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if (aIsList || a == nil) && (bIsList || b == nil) && (aIsList || bIsList) {
		cd.lists(al, bl)
		return cd.Channel
	}
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		cd.maps(am, bm)
		return cd.Channel
	}
	cd.scalars(a, b)
	return cd.Channel
}

// lines builds a Channel's lines, up to maxDiffLinesPerChannel.
type lines struct{ Channel }

func (cd *lines) add(prefix string, v any) {
	if len(cd.Lines) >= maxDiffLinesPerChannel {
		cd.More++
		return
	}
	cd.Lines = append(cd.Lines, prefix+compact(v))
}

// lists diffs two lists item by item, matched by listKey.
func (cd *lines) lists(al, bl []any) {
	keyOf := listKey(al, bl)
	old := map[string]any{}
	for i, it := range al {
		old[keyOf(i, it)] = it
	}
	seen := map[string]bool{}
	var added, changed, removed []string
	for i, it := range bl {
		k := keyOf(i, it)
		seen[k] = true
		prev, ok := old[k]
		switch {
		case !ok:
			added = append(added, k)
			cd.add("+ ", it)
		case !reflect.DeepEqual(prev, it):
			changed = append(changed, k)
			cd.add("- ", prev)
			cd.add("+ ", it)
		}
	}
	for i, it := range al {
		if k := keyOf(i, it); !seen[k] {
			removed = append(removed, k)
			cd.add("- ", it)
		}
	}
	var parts []string
	for _, p := range []struct {
		sign string
		keys []string
	}{{"+", added}, {"~", changed}, {"−", removed}} {
		if len(p.keys) > 0 {
			parts = append(parts, fmt.Sprintf("%s%d %s", p.sign, len(p.keys), span(p.keys)))
		}
	}
	cd.Summary = strings.Join(parts, ", ")
	if len(removed) > 0 {
		cd.Summary = fmt.Sprintf("replaced wholesale %d → %d items: %s", len(al), len(bl), cd.Summary)
	}
}

// maps diffs two objects field by field.
func (cd *lines) maps(am, bm map[string]any) {
	keys := map[string]bool{}
	for k := range am {
		keys[k] = true
	}
	for k := range bm {
		keys[k] = true
	}
	var fields []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		x, inA := am[k]
		y, inB := bm[k]
		if inA && inB && reflect.DeepEqual(x, y) {
			continue
		}
		fields = append(fields, k)
		if inA {
			cd.add("- "+k+": ", x)
		}
		if inB {
			cd.add("+ "+k+": ", y)
		}
	}
	cd.Summary = "changed " + strings.Join(fields, ", ")
}

// scalars diffs two values that are not both lists or both objects.
func (cd *lines) scalars(a, b any) {
	switch {
	case a == nil:
		cd.Summary = "set"
	case b == nil:
		cd.Summary = "cleared"
	default:
		as, bs := compact(a), compact(b)
		if len(as) < 24 && len(bs) < 24 {
			cd.Summary = as + " → " + bs
		} else {
			cd.Summary = "changed"
		}
	}
	if a != nil {
		cd.add("- ", a)
	}
	if b != nil {
		cd.add("+ ", b)
	}
}

// listKey picks how list items are matched: by "index", then "id", else by
// position.
func listKey(a, b []any) func(int, any) string {
	for _, field := range []string{"index", "id"} {
		if allHave(a, field) && allHave(b, field) {
			prefix := ""
			if field == "index" {
				prefix = "#"
			}
			return func(_ int, it any) string {
				return prefix + fmt.Sprint(it.(map[string]any)[field])
			}
		}
	}
	return func(i int, _ any) string { return fmt.Sprintf("[%d]", i) }
}

func allHave(items []any, field string) bool {
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m[field]; !ok {
			return false
		}
	}
	return true
}

// span prints keys compactly: "#11–#13" for a run of message indices,
// otherwise the first few names.
func span(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	if strings.HasPrefix(keys[0], "#") && len(keys) > 2 {
		return "(" + keys[0] + "–" + keys[len(keys)-1] + ")"
	}
	if len(keys) > 4 {
		return "(" + strings.Join(keys[:4], ", ") + ", …)"
	}
	return "(" + strings.Join(keys, ", ") + ")"
}

func compact(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSpace(buf.String())
	if len(s) > maxDiffItemChars {
		s = clipText(s, maxDiffItemChars) + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

// clipText is the first n runes of s.
func clipText(s string, n int) string {
	count := 0
	for i := range s {
		if count == n {
			return s[:i]
		}
		count++
	}
	return s
}
