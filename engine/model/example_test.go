package model_test

import (
	"context"
	"errors"
	"fmt"

	"rewind/engine/model"
)

// A mock that plays a tool-calling model: asked with a tool, it calls it;
// once the tool's answer is in the messages, it answers in text. The mock
// holds requests to a real server's rules, so a tool call left without
// its answer is refused with the 400 a server gives.
func ExampleNewMock() {
	ctx := context.Background()
	m := model.NewMock(func(req model.Request) (model.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == model.ChatTool {
			return model.Response{Text: "It is " + last.Content + " in Oslo."}, nil
		}
		return model.Response{ToolCalls: []model.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Oslo"}`}}}, nil
	})
	msgs := []model.Message{{Role: model.ChatUser, Content: "Weather in Oslo?"}}
	tools := []model.Tool{{Name: "weather", Description: "today's weather in a city", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}}
	for round := 1; ; round++ {
		resp, err := m.Complete(ctx, model.Request{Role: "assistant", Messages: msgs, Tools: tools})
		if err != nil {
			fmt.Println(err)
			return
		}
		if len(resp.ToolCalls) == 0 {
			fmt.Printf("round %d: %s\n", round, resp.Text)
			break
		}
		c := resp.ToolCalls[0]
		fmt.Printf("round %d: calls %s%s\n", round, c.Name, c.Arguments)
		msgs = append(msgs, model.Message{Role: model.ChatAssistant, ToolCalls: resp.ToolCalls},
			model.Message{Role: model.ChatTool, ToolCallID: c.ID, Content: "-3°C"})
	}

	// The same call with the tool's answer missing: refused as a server would.
	dangling := append([]model.Message{{Role: model.ChatUser, Content: "Weather?"}},
		model.Message{Role: model.ChatAssistant, ToolCalls: []model.ToolCall{{ID: "c2", Name: "weather", Arguments: `{}`}}},
		model.Message{Role: model.ChatUser, Content: "Well?"})
	_, err := m.Complete(ctx, model.Request{Role: "assistant", Messages: dangling, Tools: tools})
	var re *model.RequestError
	fmt.Println("dangling call refused with", errors.As(err, &re) && re.Status == 400)
	fmt.Println("calls:", m.Calls()["assistant"])
	// Output:
	// round 1: calls weather{"city":"Oslo"}
	// round 2: It is -3°C in Oslo.
	// dangling call refused with true
	// calls: 3
}
