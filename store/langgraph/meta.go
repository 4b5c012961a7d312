package langgraph

import (
	"maps"
	"slices"
)

// meta is what a listing takes from a checkpoint's metadata.
type meta struct {
	all    map[string]any
	step   int
	source string
	// parents maps an enclosing namespace to its checkpoint this
	// subgraph's run hangs off.
	parents map[string]string
	// writtenBy: older LangGraph recorded the nodes' outputs ("writes").
	writtenBy []string
	damaged   string
}

// readMeta decodes metadata: JSON (SQLite's text, PostgreSQL's jsonb) or,
// from some versions, msgpack.
func readMeta(data []byte) meta {
	m := meta{all: map[string]any{}}
	if len(data) == 0 {
		return m
	}
	var v any
	if data[0] == '{' {
		var err error
		if v, err = decodeJSON(data); err != nil {
			v = Decode(TypeMsgpack, data)
		}
	} else {
		v = Decode(TypeMsgpack, data)
	}
	all, ok := v.(map[string]any)
	if !ok || isOpaqueMap(all) {
		m.damaged = "the stored metadata does not decode"
		return m
	}
	m.all = all
	if n, ok := all["step"].(int64); ok {
		m.step = int(n)
	}
	m.source, _ = all["source"].(string)
	if ps, ok := all["parents"].(map[string]any); ok {
		m.parents = map[string]string{}
		for ns, id := range ps {
			if s, ok := id.(string); ok {
				m.parents[ns] = s
			}
		}
	}
	if ws, ok := all["writes"].(map[string]any); ok {
		m.writtenBy = slices.Sorted(maps.Keys(ws))
	}
	return m
}

func isOpaqueMap(m map[string]any) bool {
	_, ok := m[KeyOpaque]
	return ok
}
