package lgtest

import (
	"bytes"
	"database/sql"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
	_ "modernc.org/sqlite" // the writer's driver
)

// DDL is the schema of LangGraph's SqliteSaver (Python and JS write the
// same).
const DDL = `
CREATE TABLE IF NOT EXISTS checkpoints (
	thread_id TEXT NOT NULL,
	checkpoint_ns TEXT NOT NULL DEFAULT '',
	checkpoint_id TEXT NOT NULL,
	parent_checkpoint_id TEXT,
	type TEXT,
	checkpoint BLOB,
	metadata BLOB,
	PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS writes (
	thread_id TEXT NOT NULL,
	checkpoint_ns TEXT NOT NULL DEFAULT '',
	checkpoint_id TEXT NOT NULL,
	task_id TEXT NOT NULL,
	idx INTEGER NOT NULL,
	channel TEXT NOT NULL,
	type TEXT,
	value BLOB,
	PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);`

// Ext is a msgpack extension value: LangGraph's serializer wraps each
// typed object in one (code 5: a pydantic model by constructor path, its
// payload [module, class, fields, method]), its payload msgpack too.
type Ext struct {
	Code    int8
	Payload any
}

// Bin is msgpack binary data for MP.
type Bin []byte

// Raw is msgpack MP writes as it is.
type Raw []byte

// MP encodes v as LangGraph's serializer does: maps (keys sorted, any key
// type), lists, Ext and Bin values, scalars.
func MP(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := encode(msgpack.NewEncoder(&buf), v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encode(e *msgpack.Encoder, v any) error {
	switch x := v.(type) {
	case Ext:
		var inner bytes.Buffer
		if err := encode(msgpack.NewEncoder(&inner), x.Payload); err != nil {
			return err
		}
		if err := e.EncodeExtHeader(x.Code, inner.Len()); err != nil {
			return err
		}
		_, err := e.Writer().Write(inner.Bytes())
		return err
	case Bin:
		return e.EncodeBytes(x)
	case Raw:
		_, err := e.Writer().Write(x)
		return err
	case []any:
		if err := e.EncodeArrayLen(len(x)); err != nil {
			return err
		}
		for _, it := range x {
			if err := encode(e, it); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		if err := e.EncodeMapLen(len(x)); err != nil {
			return err
		}
		for _, k := range keys {
			if err := e.EncodeString(k); err != nil {
				return err
			}
			if err := encode(e, x[k]); err != nil {
				return err
			}
		}
		return nil
	case map[any]any:
		if err := e.EncodeMapLen(len(x)); err != nil {
			return err
		}
		for k, it := range x {
			if err := encode(e, k); err != nil {
				return err
			}
			if err := encode(e, it); err != nil {
				return err
			}
		}
		return nil
	}
	return e.Encode(v)
}

// ID is the nth checkpoint id: UUIDv6-shaped and sorting as n does.
func ID(n int) string {
	return fmt.Sprintf("1f1ed296-%04x-6%03x-8000-%012x", n>>12&0xffff, n&0xfff, n)
}

// Writer writes a LangGraph SQLite file as SqliteSaver does: one msgpack
// checkpoint (format 4, every channel's value inline) per row, writes
// beside it. It is another connection than the reader's, as another
// process's would be.
type Writer struct {
	t  testing.TB
	DB *sql.DB
}

// OpenWriter opens path to write (making LangGraph's tables if missing).
func OpenWriter(t testing.TB, path string) *Writer {
	t.Helper()
	// A reader polling the file (the TUI's follow) holds its lock for a
	// moment: wait for it, as LangGraph's own saver would, not fail busy.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	if _, err := db.Exec(DDL); err != nil {
		t.Fatal(err)
	}
	return &Writer{t: t, DB: db}
}

// Checkpoint stores checkpoint id of thread's chain ns with the channel
// values given, the next node triggered through its branch channel.
func (w *Writer) Checkpoint(thread, ns, id, parent, source string, step int, values map[string]any, next string) {
	w.t.Helper()
	if _, err := w.DB.Exec(`INSERT INTO checkpoints VALUES (?, ?, ?, ?, 'msgpack', ?, ?)`, thread, ns, id, nullable(parent),
		Doc(w.t, id, values, next), Meta(source, step)); err != nil {
		w.t.Fatal(err)
	}
}

// Write stores one write of task for the superstep from checkpoint id.
func (w *Writer) Write(thread, ns, id, task string, idx int, channel string, value any) {
	w.t.Helper()
	if _, err := w.DB.Exec(`INSERT INTO writes VALUES (?, ?, ?, ?, ?, ?, 'msgpack', ?)`, thread, ns, id, task, idx, channel, MP(w.t, value)); err != nil {
		w.t.Fatal(err)
	}
}

// Doc is a format-4 checkpoint as Python's serializer stores it; next
// (when not "") is the node its branch channel triggers.
func Doc(t testing.TB, id string, values map[string]any, next string) []byte {
	versions, seen := map[string]any{}, map[string]any{}
	if next != "" {
		ch := "branch:to:" + next
		values = clone(values)
		values[ch] = nil
		versions[ch] = "00000000000000000000000000000002.0.5"
		seen[next] = map[string]any{ch: "00000000000000000000000000000001.0.5"}
	}
	return MP(t, map[string]any{"v": 4, "id": id, "ts": "2026-01-02T03:04:05.000001+00:00",
		"channel_values": values, "channel_versions": versions, "versions_seen": seen, "updated_channels": []any{}})
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Meta is a checkpoint's metadata as LangGraph stores it.
func Meta(source string, step int) []byte {
	return []byte(fmt.Sprintf(`{"source": %q, "step": %d, "parents": {}}`, source, step))
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// AIMessage is a LangChain AIMessage as Python stores it, with one tool
// call (call_N).
func AIMessage(n int) Ext {
	return Ext{5, []any{"langchain_core.messages.ai", "AIMessage", map[string]any{
		"content": fmt.Sprintf("step %d: a reply of a realistic length, with a tool call to make the message look like one an agent sends", n),
		"id":      fmt.Sprintf("ai-%d", n), "type": "ai", "name": nil, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
		"tool_calls": []any{map[string]any{"name": "search", "args": map[string]any{"q": "x", "k": n}, "id": fmt.Sprintf("call_%d", n), "type": "tool_call"}},
	}, "model_validate_json"}}
}

// Big writes thread "big" of n checkpoints into a new file in dir and
// returns its path: each checkpoint as Python's serializer stores it (a
// window of 20 LangChain messages, a custom list, a pydantic model, a
// datetime), two writes, and a fork every 500 checkpoints.
func Big(t testing.TB, dir string, n int) string {
	t.Helper()
	path := filepath.Join(dir, "big.db")
	w := OpenWriter(t, path)
	tx, err := w.DB.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	msgs := make([]any, 0, n)
	for i := 1; i <= n; i++ {
		msgs = append(msgs, AIMessage(i))
		parent := ""
		if i > 1 {
			parent = ID(i - 1)
			if i%500 == 0 {
				parent = ID(i - 3) // a fork
			}
		}
		values := map[string]any{
			"messages": msgs[max(0, len(msgs)-20):], "findings": []any{"a", "b", fmt.Sprint(i)}, "topic": "tables",
			"note":  Ext{5, []any{"__main__", "Note", map[string]any{"title": "t", "score": 0.5}, "model_validate_json"}},
			"stamp": Ext{3, []any{"datetime", "datetime", "2026-01-02T03:04:05+00:00", "fromisoformat"}},
		}
		if _, err := tx.Exec(`INSERT INTO checkpoints VALUES ('big', '', ?, ?, 'msgpack', ?, ?)`, ID(i), nullable(parent),
			Doc(t, ID(i), values, "agent"), Meta("loop", i)); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO writes VALUES ('big', '', ?, ?, 0, 'messages', 'msgpack', ?)`, ID(i), fmt.Sprintf("task-%d", i), MP(t, []any{AIMessage(i + 1)})); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return path
}
