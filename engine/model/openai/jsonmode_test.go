package openai

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"rewind/engine/model"
	"rewind/engine/model/openai/openaitest"
)

var planSchema = &model.Schema{Name: "plan", Schema: json.RawMessage(`{"type":"object","properties":{"subtasks":{"type":"array","items":{"type":"string"}}},"required":["subtasks"],"additionalProperties":false}`)}

// chatty answers the way chat models do when asked for JSON in the prompt:
// the JSON in a fence, inside prose.
func chatty(string, model.Request) (model.Response, error) {
	return model.Response{Text: "Sure, here is the plan:\n\n```json\n{\"subtasks\": [\"order\"]}\n```\n\nLet me know {if} it helps."}, nil
}

func jsonReq() model.Request {
	r := req
	r.JSON = planSchema
	return r
}

// formats is what each request asked for.
func formats(rs []openaitest.Request) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ResponseFormat
	}
	return out
}

func TestStructuredOutputFallsBackAndRemembers(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		formats openaitest.Formats
		mode    string
		first   []string // response_format of the first call's requests
		answer  string
	}{
		{"json_schema", openaitest.FormatsAll, model.JSONSchema, []string{"json_schema"}, `{"subtasks": ["order"]}`},
		{"json_object only", openaitest.FormatsObject, model.JSONObject, []string{"json_schema", "json_object"}, `{"subtasks": ["order"]}`},
		{"no response_format", openaitest.FormatsNone, model.JSONPrompt, []string{"json_schema", "json_object", ""}, "Sure, here is the plan:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, chatty, nil)
			h.srv.SetFormats(c.formats)
			resp, err := h.p.Complete(ctx, jsonReq())
			if err != nil {
				t.Fatal(err)
			}
			if resp.JSONMode != c.mode || !strings.HasPrefix(resp.Text, c.answer) {
				t.Errorf("mode %q, text %q; want mode %q, text starting %q", resp.JSONMode, resp.Text, c.mode, c.answer)
			}
			got := h.srv.Requests()
			if strings.Join(formats(got), ",") != strings.Join(c.first, ",") {
				t.Errorf("first call sent %q, want %q", formats(got), c.first)
			}
			if s := got[0]; s.SchemaName != "plan" || !s.Strict || string(s.Schema) != string(planSchema.Schema) {
				t.Errorf("json_schema sent as name %q strict %t schema %s", s.SchemaName, s.Strict, s.Schema)
			}
			// The accepted mode is kept: the next call asks in it at once.
			resp, err = h.p.Complete(ctx, jsonReq())
			if err != nil || resp.JSONMode != c.mode {
				t.Fatalf("second call: mode %q, %v", resp.JSONMode, err)
			}
			if got := formats(h.srv.Requests()[len(c.first):]); len(got) != 1 || got[0] != c.first[len(c.first)-1] {
				t.Errorf("second call sent %q, want only %q", got, c.first[len(c.first)-1])
			}
			// A text call asks for no format and reports no mode.
			resp, err = h.p.Complete(ctx, req)
			if all := h.srv.Requests(); err != nil || resp.JSONMode != "" || all[len(all)-1].ResponseFormat != "" {
				t.Errorf("text call: mode %q, format %q, %v", resp.JSONMode, all[len(all)-1].ResponseFormat, err)
			}
		})
	}
}

func TestForcedJSONModeIsNotWeakened(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, chatty, func(c *Config) { c.JSONMode = model.JSONSchema })
	h.srv.SetFormats(openaitest.FormatsObject)
	_, err := h.p.Complete(ctx, jsonReq())
	if !errors.Is(err, ErrFormatRefused) || len(h.srv.Requests()) != 1 {
		t.Fatalf("forced schema on a json_object server: %v after %d requests, want ErrFormatRefused after 1", err, len(h.srv.Requests()))
	}
	var oe *Error
	if !errors.As(err, &oe) || oe.Mode != model.JSONSchema || oe.Weaker != model.JSONObject {
		t.Errorf("refused schema: %+v, want Mode schema and Weaker object (the CLI words them as --json-mode)", oe)
	}
	for _, want := range []string{"planner call to 127.0.0.1", "(model fake-large)", "JSON mode schema", "400", "response_format"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("more than one line: %q", err)
	}

	h = newHarness(t, chatty, func(c *Config) { c.JSONMode = model.JSONPrompt })
	resp, err := h.p.Complete(ctx, jsonReq())
	if err != nil || resp.JSONMode != model.JSONPrompt || h.srv.Requests()[0].ResponseFormat != "" {
		t.Errorf("forced prompt: mode %q, sent %q, %v", resp.JSONMode, h.srv.Requests()[0].ResponseFormat, err)
	}
	if _, err := New(Config{BaseURL: h.srv.BaseURL(), Models: allModels("m"), JSONMode: "xml"}); err == nil || !strings.Contains(err.Error(), "schema, object, prompt") {
		t.Errorf("an unknown mode: %v", err)
	}
}

// A 400 about something else is not a reason to weaken the mode.
func TestOtherRefusalsDoNotWeakenTheMode(t *testing.T) {
	h := newHarness(t, chatty, nil)
	h.srv.Fail(openaitest.Fault{Status: 400, Code: "context_length_exceeded", Message: "This model's maximum context length is 8192 tokens"})
	_, err := h.p.Complete(context.Background(), jsonReq())
	if !errors.Is(err, ErrRejected) || errors.Is(err, ErrFormatRefused) || len(h.srv.Requests()) != 1 || h.p.JSONMode() != model.JSONSchema {
		t.Fatalf("%v after %d requests, mode now %q", err, len(h.srv.Requests()), h.p.JSONMode())
	}
	// A server answering in its own error shape still names the field.
	h.srv.Fail(openaitest.Fault{Status: 422, Body: `{"detail":[{"loc":["body","response_format"],"msg":"extra fields not permitted"}]}`})
	if _, err := h.p.Complete(context.Background(), jsonReq()); err != nil || h.p.JSONMode() != model.JSONObject {
		t.Fatalf("a FastAPI-style 422 on response_format: %v, mode %q", err, h.p.JSONMode())
	}
}
