package ticket

import (
	"encoding/json"
	"fmt"
	"rewind/engine/event"
	"slices"
	"strings"

	"rewind/engine/model"
)

// The executors' tools, offered to the model as function tools: the model
// picks the call and writes its arguments, and the executor runs it and
// answers with a tool message.

// MaxToolRounds bounds the tool rounds of one executor task: past it the
// model is told to answer from what it has, and a model that still asks
// for tools ends the task degraded.
const MaxToolRounds = 3

// Events of the executors' tool calls.
const (
	// EventToolError: the model called a tool that does not exist, or
	// with arguments the tool cannot take; it got an error message back.
	EventToolError = event.TypeToolError
	// EventToolRefused: a call past the turn's tool budget (or the task's
	// rounds) was answered with a refusal, not run.
	EventToolRefused = event.TypeToolRefused
	// EventToolLoop: the model kept calling tools after being told to
	// answer; the task ended degraded with no finding.
	EventToolLoop = event.TypeToolLoop
)

// toolSpec is one tool: its name, what it does and the argument it takes.
type toolSpec struct {
	name, about, arg, argAbout string
}

var ticketTools = []toolSpec{
	{"lookup_order", "Look up an order: its warehouse stage, since when, and its items.", "order", "the order number, e.g. SO20260901"},
	{"shipping_events", "Look up an order's shipment: carrier, latest scan, estimated delivery.", "order", "the order number"},
	{"refund_policy", "Check an order's refund eligibility, window and refund method.", "order", "the order number"},
	{"address_change", "Check whether and until when an order's delivery address can be changed.", "order", "the order number"},
	{"invoice_lookup", "Find an order's invoice: number, VAT rate, billing details.", "order", "the order number"},
	{"warranty_check", "Check warranty coverage of an order's item: until when, what it covers.", "order", "the order number"},
	{"cancel_check", "Check whether an order can still be cancelled, and at what fee.", "order", "the order number"},
	{"payment_lookup", "List the payments taken for an order, with amounts and dates.", "order", "the order number"},
	{"search_kb", "Search the support knowledge base for an article on the question.", "order", "the order number, or an empty string"},
}

var siteTools = []toolSpec{
	{"site_survey", "Read the surveyed excavation depth, grid line and drawing depth of a day log.", "log", "the day-log id, e.g. DL20261003"},
	{"batch_ticket", "Read a day log's concrete batch ticket: batch number, volume, grade, cubes.", "log", "the day-log id"},
	{"change_orders", "Read a day log's change order: number, who approved it in writing, and when.", "log", "the day-log id"},
	{"inspection_log", "Read a day log's inspection record: inspector and result.", "log", "the day-log id"},
	{"weather_log", "Read a day log's weather record: rain, wind and hours lost.", "log", "the day-log id"},
	{"safety_register", "Read a day log's safety register entry: incident and action.", "log", "the day-log id"},
	{"search_kb", "Search the site's document base for anything the other tools do not cover.", "log", "the day-log id, or an empty string"},
}

// toolsFor is the scenario's tools.
func toolsFor(scenario string) []toolSpec {
	if scenario == ScenarioSiteLog {
		return siteTools
	}
	return ticketTools
}

// modelTools is the scenario's tools as the model is offered them.
func modelTools(scenario string) []model.Tool {
	specs := toolsFor(scenario)
	out := make([]model.Tool, len(specs))
	for i, t := range specs {
		params := fmt.Sprintf(`{"type":"object","properties":{%q:{"type":"string","description":%q}},"required":[%q],"additionalProperties":false}`, t.arg, t.argAbout, t.arg)
		out[i] = model.Tool{Name: t.name, Description: t.about, Parameters: json.RawMessage(params)}
	}
	return out
}

// toolArgs checks a call against the scenario's tools and reads its one
// argument. The error is what the model is told: what was wrong and what
// the tools are.
func toolArgs(scenario string, c model.ToolCall) (spec toolSpec, ref string, err error) {
	specs := toolsFor(scenario)
	i := slices.IndexFunc(specs, func(t toolSpec) bool { return t.name == c.Name })
	if i < 0 {
		names := make([]string, len(specs))
		for j, t := range specs {
			names[j] = t.name
		}
		return toolSpec{}, "", fmt.Errorf("unknown tool %q: the tools are %s", clip(c.Name, 40), strings.Join(names, ", "))
	}
	spec = specs[i]
	var args map[string]any
	if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil || args == nil {
		return spec, "", fmt.Errorf("the arguments of %s are not a JSON object (%s): call it again with {%q: \"…\"}", spec.name, clip(c.Arguments, 60), spec.arg)
	}
	v, ok := args[spec.arg].(string)
	if !ok {
		return spec, "", fmt.Errorf("%s needs %q, a string (%s): call it again with {%q: \"…\"}", spec.name, spec.arg, spec.argAbout, spec.arg)
	}
	return spec, strings.TrimSpace(v), nil
}

// toolError is the tool message a refused or failed call gets.
func toolError(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}
