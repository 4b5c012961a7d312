package research

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"rewind/engine/model"
)

// Passage is one entry of the offline corpus the search branches and the
// writer's lookup tool read.
type Passage struct {
	ID    string `json:"id"`
	Topic string `json:"topic"`
	Text  string `json:"text"`
}

// corpus is small and fixed: a run is the same on every machine, and a
// recorded run replays against the same passages.
var corpus = []Passage{
	{ID: "wal-1", Topic: "wal", Text: "In WAL mode SQLite appends each commit to a separate write-ahead log file instead of rewriting the database pages in place."},
	{ID: "wal-2", Topic: "wal", Text: "Readers in WAL mode keep reading the snapshot they started with while one writer appends, so reads do not block the writer."},
	{ID: "checkpoint-1", Topic: "checkpoint", Text: "A WAL checkpoint copies committed pages from the log back into the database file; PASSIVE checkpoints never wait for readers."},
	{ID: "checkpoint-2", Topic: "checkpoint", Text: "The log grows until a checkpoint can reset it; a reader that never finishes keeps the log from being reset."},
	{ID: "fsync-1", Topic: "fsync", Text: "With synchronous=FULL a commit is durable once the log is fsynced; synchronous=NORMAL fsyncs only at checkpoints and may lose the last commits on power loss."},
	{ID: "fsync-2", Topic: "fsync", Text: "A power cut never corrupts a WAL database in NORMAL mode: it loses a suffix of commits, in order."},
	{ID: "lock-1", Topic: "locking", Text: "Only one writer holds the WAL write lock at a time; a second writer waits for busy_timeout and then gets SQLITE_BUSY."},
	{ID: "lock-2", Topic: "locking", Text: "BEGIN IMMEDIATE takes the write lock at the start of a transaction, so a writer fails early instead of at its first write."},
}

// Topics are the corpus's topics, sorted: what the planner may split a
// question into.
func Topics() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range corpus {
		if !seen[p.Topic] {
			seen[p.Topic] = true
			out = append(out, p.Topic)
		}
	}
	sort.Strings(out)
	return out
}

// keywords say which topic a question's words are about.
var keywords = map[string][]string{
	"wal":        {"wal", "write-ahead", "log"},
	"checkpoint": {"checkpoint", "grow", "reset"},
	"fsync":      {"fsync", "durable", "durability", "power", "synchronous", "lose"},
	"locking":    {"lock", "writer", "writers", "busy", "concurrent"},
}

// topicsOf are the corpus topics text is about, in corpus order.
func topicsOf(text string) []string {
	t := strings.ToLower(text)
	var out []string
	for _, topic := range Topics() {
		for _, k := range keywords[topic] {
			if strings.Contains(t, k) {
				out = append(out, topic)
				break
			}
		}
	}
	return out
}

// Lookup is the passages of topic (a topic name or any of its keywords).
func Lookup(topic string) []Passage {
	ts := topicsOf(topic)
	var out []Passage
	for _, p := range corpus {
		for _, t := range ts {
			if p.Topic == t {
				out = append(out, p)
			}
		}
	}
	return out
}

// passagesText is passages as the model reads them, one a line.
func passagesText(ps []Passage) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "[%s] %s\n", p.ID, p.Text)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// The writer's tools.
const (
	ToolLookup = "lookup"
	ToolCite   = "cite"
)

// tools are offered to the writer in every request of its loop.
var tools = []model.Tool{
	{Name: ToolLookup, Description: "Read the corpus passages about a topic (" + strings.Join(Topics(), ", ") + ").",
		Parameters: json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}`)},
	{Name: ToolCite, Description: "Read a research note by its id (q1, q2, …) to cite it.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"note_id":{"type":"string"}},"required":["note_id"]}`)},
}

// runTool executes one tool call against the corpus and the notes: its
// result is text for the model, an error of the call's arguments among it
// (a model may write bad arguments; the loop tells it, it does not fail).
func runTool(c model.ToolCall, notes []Note) string {
	var args struct {
		Topic  string `json:"topic"`
		NoteID string `json:"note_id"`
	}
	if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
		return fmt.Sprintf("error: the arguments are not a JSON object (%v): call %s again with JSON arguments", err, c.Name)
	}
	switch c.Name {
	case ToolLookup:
		ps := Lookup(args.Topic)
		if len(ps) == 0 {
			return fmt.Sprintf("no passage about %q: the topics are %s", args.Topic, strings.Join(Topics(), ", "))
		}
		return passagesText(ps)
	case ToolCite:
		var ids []string
		for _, n := range notes {
			if n.ID == args.NoteID {
				return fmt.Sprintf("[%s] %s", n.ID, n.Text)
			}
			ids = append(ids, n.ID)
		}
		return fmt.Sprintf("no note %q: the notes are %s", args.NoteID, strings.Join(ids, ", "))
	}
	return fmt.Sprintf("no tool %q: the tools are %s and %s", c.Name, ToolLookup, ToolCite)
}
