package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// ChannelDiff is how one channel changed between two checkpoints.
type ChannelDiff struct {
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

// Diff compares two checkpoints' channel values (any two: a parent and its
// child, or checkpoints of different branches). Lists of objects are
// matched by their "index" (messages) or "id" (subtasks, attachments) so an
// append shows as additions and a wholesale replace shows what was dropped.
func Diff(parent, cur Values) []ChannelDiff {
	names := map[string]bool{}
	for k := range parent {
		names[k] = true
	}
	for k := range cur {
		names[k] = true
	}
	keys := slices.Sorted(maps.Keys(names))
	var out []ChannelDiff
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

func diffChannel(ch string, a, b any) ChannelDiff {
	cd := ChannelDiff{Channel: ch}
	add := func(prefix string, v any) {
		if len(cd.Lines) >= maxDiffLinesPerChannel {
			cd.More++
			return
		}
		cd.Lines = append(cd.Lines, prefix+compact(v))
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if (aIsList || a == nil) && (bIsList || b == nil) && (aIsList || bIsList) {
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
				add("+ ", it)
			case !reflect.DeepEqual(prev, it):
				changed = append(changed, k)
				add("- ", prev)
				add("+ ", it)
			}
		}
		for i, it := range al {
			if k := keyOf(i, it); !seen[k] {
				removed = append(removed, k)
				add("- ", it)
			}
		}
		var parts []string
		if len(added) > 0 {
			parts = append(parts, fmt.Sprintf("+%d %s", len(added), span(added)))
		}
		if len(changed) > 0 {
			parts = append(parts, fmt.Sprintf("~%d %s", len(changed), span(changed)))
		}
		if len(removed) > 0 {
			parts = append(parts, fmt.Sprintf("−%d %s", len(removed), span(removed)))
		}
		cd.Summary = strings.Join(parts, ", ")
		if len(removed) > 0 {
			cd.Summary = fmt.Sprintf("replaced wholesale %d → %d items: %s", len(al), len(bl), cd.Summary)
		}
		return cd
	}
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := slices.Sorted(maps.Keys(keys))
		var fields []string
		for _, k := range sorted {
			x, inA := am[k]
			y, inB := bm[k]
			if inA && inB && reflect.DeepEqual(x, y) {
				continue
			}
			fields = append(fields, k)
			if inA {
				add("- "+k+": ", x)
			}
			if inB {
				add("+ "+k+": ", y)
			}
		}
		cd.Summary = "changed " + strings.Join(fields, ", ")
		return cd
	}
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
		add("- ", a)
	}
	if b != nil {
		add("+ ", b)
	}
	return cd
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
