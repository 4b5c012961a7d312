package research

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"rewind/engine/model"
)

// NewMock is the graph's offline stand-in model: deterministic, answering
// each role as a chat model would (Respond).
func NewMock() *model.Mock { return model.NewMock(Respond) }

// questions are the planner's sub-question for each topic.
var questions = map[string]string{
	"wal":        "How does WAL mode write a commit, and what do readers see meanwhile?",
	"checkpoint": "What does a WAL checkpoint do, and what keeps the log from being reset?",
	"fsync":      "What does each synchronous setting make durable, and what can a power cut lose?",
	"locking":    "How many writers can commit at once, and what happens to the others?",
}

// Respond answers a request of the graph's roles. It tells the role from
// the system prompt, as a model does (a server never sees the role), so
// the fake OpenAI-compatible server answers with it too (Brain).
func Respond(req model.Request) (model.Response, error) {
	sys := req.System()
	switch {
	case strings.HasPrefix(sys, "You are the planner of a research assistant"):
		return planAnswer(req.Prompt())
	case strings.HasPrefix(sys, "You are a searcher of a research assistant"):
		return model.Response{Text: searchAnswer(req.Prompt())}, nil
	case strings.HasPrefix(sys, "You are the writer of a research assistant"):
		return writeAnswer(req), nil
	}
	return model.Response{}, fmt.Errorf("the research mock plays the planner, a searcher and the writer; this request's system prompt is none of them: %q", clip(sys, 80))
}

// Brain is Respond as the fake OpenAI-compatible server's brain
// (engine/model/openai/openaitest.Brain), for recordings.
func Brain(_ string, req model.Request) (model.Response, error) { return Respond(req) }

// planAnswer splits the question by the corpus topics it names: at least
// two (the first topics of the corpus make up the rest), at most four.
func planAnswer(prompt string) (model.Response, error) {
	q := strings.TrimPrefix(prompt, "Question: ")
	topics := topicsOf(q)
	for _, t := range Topics() {
		if len(topics) >= 2 {
			break
		}
		if !contains(topics, t) {
			topics = append(topics, t)
		}
	}
	if len(topics) > 4 {
		topics = topics[:4]
	}
	subs := make([]Sub, len(topics))
	for i, t := range topics {
		subs[i] = Sub{ID: fmt.Sprintf("q%d", i+1), Question: questions[t], Topic: t}
	}
	b, err := json.Marshal(map[string]any{"subquestions": subs})
	return model.Response{Text: string(b)}, err
}

// The mock's patterns are compiled at its first answer, not at the start
// of every rewind process (which links the demo).
var passageLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\[([a-z0-9-]+)\] (.+)$`) })

// searchAnswer is the passages' sentences with their ids.
func searchAnswer(prompt string) string {
	var texts, ids []string
	for _, m := range passageLine().FindAllStringSubmatch(prompt, -1) {
		ids, texts = append(ids, m[1]), append(texts, m[2])
	}
	if len(ids) == 0 {
		return "The corpus has nothing on this sub-question."
	}
	return strings.Join(texts, " ") + " [" + strings.Join(ids, ", ") + "]"
}

var (
	noteLine   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^- (q[0-9]+): `) })
	reviewLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^The reviewer sent the draft back: (.+)$`) })
)

// writeAnswer plays the writer's loop: first it cites every note; when the
// reviewer sent the draft back, it looks the reviewer's note up; then it
// answers from what the tools returned.
func writeAnswer(req model.Request) model.Response {
	prompt := req.Prompt()
	var results []string
	rounds := 0
	for _, m := range req.Messages {
		switch {
		case m.Role == model.ChatAssistant && len(m.ToolCalls) > 0:
			rounds++
		case m.Role == model.ChatTool:
			results = append(results, m.Content)
		}
	}
	review := reviewLine().FindStringSubmatch(prompt)
	switch {
	case rounds == 0:
		var calls []model.ToolCall
		for i, m := range noteLine().FindAllStringSubmatch(prompt, -1) {
			calls = append(calls, model.ToolCall{ID: fmt.Sprintf("call-cite-%d", i+1), Name: ToolCite, Arguments: fmt.Sprintf(`{"note_id":%q}`, m[1])})
		}
		if len(calls) > 0 {
			return model.Response{ToolCalls: calls}
		}
	case rounds == 1 && review != nil:
		return model.Response{ToolCalls: []model.ToolCall{{ID: "call-lookup-1", Name: ToolLookup, Arguments: fmt.Sprintf(`{"topic":%q}`, review[1])}}}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Answer to: %s\n", strings.TrimPrefix(strings.SplitN(prompt, "\n", 2)[0], "Question: "))
	for _, r := range results {
		for _, line := range strings.Split(r, "\n") {
			if m := passageLine().FindStringSubmatch(line); m != nil {
				fmt.Fprintf(&b, "- %s [%s]\n", m[2], m[1])
			} else if line = strings.TrimSpace(line); line != "" {
				fmt.Fprintf(&b, "- %s\n", line)
			}
		}
	}
	if review != nil {
		fmt.Fprintf(&b, "(revised: %s)\n", review[1])
	}
	return model.Response{Text: strings.TrimSuffix(b.String(), "\n")}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
