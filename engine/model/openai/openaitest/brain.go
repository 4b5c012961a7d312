package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"rewind/engine/model"
	"rewind/engine/ticket"
)

// TicketBrain answers the ticket graph's prompts the way a chat model does:
// the plan and the verdict as JSON inside prose and a code fence, findings
// and the reply as sentences. Its decisions (which subtasks, which output
// the critic bounces) follow the ticket mock, so a run takes the same path.
// It tells the role from the system prompt, as a real model would have to,
// and reads the request's conversation and tool rounds as the mock does.
func TicketBrain(_ string, req model.Request) (model.Response, error) {
	text := func(s string, err error) (model.Response, error) { return model.Response{Text: s}, err }
	system, prompt := req.System(), ticket.Instructions(req)
	// Each system prompt mentions other roles ("check each executor
	// output", "if the critic gave feedback"), so match how it introduces
	// the model itself.
	s := strings.ToLower(system)
	switch {
	case strings.Contains(s, "you compress"):
		req.Role = model.RoleSummarizer
		return ticket.Respond(req)
	case strings.Contains(s, "you are the critic"):
		return text(critic(req, prompt))
	case strings.Contains(s, "you are the planner"):
		return text(planner(req))
	case strings.Contains(s, "you are an executor"):
		return executor(req, prompt)
	case strings.Contains(s, "final reply"):
		return text(reply(req, prompt), nil)
	}
	return model.Response{}, fmt.Errorf("the ticket brain does not know the system prompt %q", clip(system, 60))
}

// ProseBrain is TicketBrain with a model that cannot keep to a format: it
// answers the planner and the critic in sentences, with no JSON at all,
// whatever it is asked.
func ProseBrain(mdl string, req model.Request) (model.Response, error) {
	s := strings.ToLower(req.System())
	switch {
	case strings.Contains(s, "you are the planner"):
		return model.Response{Text: "I would first look up the order, then check where the parcel is, and finally see whether a refund is possible."}, nil
	case strings.Contains(s, "you are the critic"):
		return model.Response{Text: "These findings look reasonable to me; the customer should be satisfied."}, nil
	}
	return TicketBrain(mdl, req)
}

func fenced(intro, raw, outro string) (string, error) {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(raw), "", "  "); err != nil {
		return "", err
	}
	out := intro + "\n\n```json\n" + b.String() + "\n```"
	if outro != "" {
		out += "\n\n" + outro
	}
	return out, nil
}

func planner(req model.Request) (string, error) {
	req.Role = model.RolePlanner
	resp, err := ticket.Respond(req)
	if err != nil {
		return "", err
	}
	raw := resp.Text
	// Keep only the fields the system prompt asks for, as a model would.
	var plan struct {
		Subtasks []struct {
			ID    string `json:"id"`
			Goal  string `json:"goal"`
			Topic string `json:"topic"`
		} `json:"subtasks"`
	}
	if err := json.Unmarshal([]byte(raw), &plan); err != nil {
		return "", err
	}
	var topics []string
	for _, s := range plan.Subtasks {
		topics = append(topics, s.Topic)
	}
	b, err := json.Marshal(plan)
	if err != nil {
		return "", err
	}
	intro := fmt.Sprintf("The customer asks %s, so I split the request into one independent subtask per question.", count(len(topics), "question")+" ("+strings.Join(topics, ", ")+")")
	return fenced(intro, string(b), "Each goal carries the order number so the executors can look it up directly.")
}

func count(n int, noun string) string {
	words := []string{"no", "one", "two", "three", "four", "five"}
	w := fmt.Sprint(n)
	if n < len(words) {
		w = words[n]
	}
	if n != 1 {
		noun += "s"
	}
	return w + " " + noun
}

var (
	reFeedback = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^FEEDBACK: (.*)$`) })
	reRequest  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^REQUEST: (.*)$`) })
	reFinding  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^FINDING (\S+) \[(\w+)\]: (.*)$`) })
	reOutput   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^OUTPUT (\S+) \[(\w+)\]: (.*)$`) })
	reOrder    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b[A-Z]{2}\d{6,12}\b`) })
)

func executor(req model.Request, prompt string) (model.Response, error) {
	req.Role = model.RoleExecutor
	act, err := ticket.Respond(req)
	if err != nil {
		return model.Response{}, err
	}
	if len(act.ToolCalls) > 0 {
		// A server's call ids are its own; rewind must send them back as
		// given.
		for i := range act.ToolCalls {
			act.ToolCalls[i].ID = "call_" + strings.NewReplacer("-", "", "_", "").Replace(act.ToolCalls[i].ID)
		}
		return model.Response{ToolCalls: act.ToolCalls}, nil
	}
	var tool, result string
	parts := ticket.Parts(req.Messages)
	names := map[string]string{}
	for i, m := range req.Messages {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
		if parts[i] == model.PartRounds && m.Role == model.ChatTool {
			tool, result = names[m.ToolCallID], m.Content
		}
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(result), &r); err != nil {
		return model.Response{}, fmt.Errorf("tool result is not JSON: %w", err)
	}
	if e, ok := r["error"].(string); ok {
		return model.Response{Text: "I could not look this up: " + e}, nil
	}
	v := func(k string) string { return fmt.Sprint(r[k]) }
	yes := func(k string) bool { b, _ := r[k].(bool); return b }
	var out string
	switch tool {
	case "lookup_order":
		out = fmt.Sprintf("According to lookup_order, order %s is at the stage \"%s\" since %s, with %s item(s) in it.", v("order"), v("stage"), v("since"), v("items"))
	case "shipping_events":
		out = fmt.Sprintf("shipping_events shows the parcel is with %s; the latest scan was %s, and the estimated delivery date is %s.", v("carrier"), v("lastScan"), v("eta"))
	case "refund_policy":
		if yes("eligible") {
			out = fmt.Sprintf("Per refund_policy the order is eligible for a refund within %s; the money goes back to the %s.", v("window"), v("method"))
		} else {
			out = fmt.Sprintf("Per refund_policy the order is not eligible for a refund at the moment (window: %s).", v("window"))
		}
	case "address_change":
		if yes("changeable") {
			out = fmt.Sprintf("address_change says the delivery address can still be changed until %s.", v("until"))
		} else {
			out = fmt.Sprintf("address_change says the delivery address can no longer be changed (cut-off %s).", v("until"))
		}
	case "invoice_lookup":
		out = fmt.Sprintf("invoice_lookup found invoice %s for order %s, with %s VAT, billed %s.", v("invoice"), v("order"), v("vat"), v("billedTo"))
	case "warranty_check":
		out = fmt.Sprintf("warranty_check: the item is covered until %s, for %s.", v("until"), v("covers"))
	case "cancel_check":
		if yes("cancellable") {
			out = fmt.Sprintf("cancel_check: the order can still be cancelled, fee %s.", v("fee"))
		} else {
			out = "cancel_check: the order can no longer be cancelled."
		}
	case "site_survey":
		out = fmt.Sprintf("site_survey: the excavation at grid %s is %s deep against %s on the drawing, surveyed on %s.", v("grid"), v("depth"), v("drawing"), v("surveyedOn"))
	case "batch_ticket":
		out = fmt.Sprintf("batch_ticket: batch %s, %s of %s; the test cubes gave %s.", v("batch"), v("volume"), v("grade"), v("cubes"))
	case "change_orders":
		out = fmt.Sprintf("change_orders: %s was approved in writing by %s on %s.", v("changeOrder"), v("approvedBy"), v("approvedOn"))
	case "inspection_log":
		out = fmt.Sprintf("inspection_log: inspected by %s, result: %s.", v("inspector"), v("result"))
	case "weather_log":
		out = fmt.Sprintf("weather_log: %s of rain, wind %s, %s lost.", v("rain"), v("wind"), v("hoursLost"))
	case "safety_register":
		out = fmt.Sprintf("safety_register: incident %s, action: %s.", v("incident"), v("action"))
	case "payment_lookup":
		b, _ := json.Marshal(r["charges"])
		out = fmt.Sprintf("payment_lookup lists these charges for order %s: %s.", v("order"), b)
	default:
		out = fmt.Sprintf("The knowledge base article %s covers this case.", v("article"))
	}
	if fb := reFeedback().FindStringSubmatch(prompt); fb != nil {
		out = "Revised after review (" + fb[1] + "): " + out
	}
	return model.Response{Text: out}, nil
}

func critic(req model.Request, prompt string) (string, error) {
	req.Role = model.RoleCritic
	resp, err := ticket.Respond(req)
	if err != nil {
		return "", err
	}
	raw := resp.Text
	var verdict struct {
		Redo []struct {
			ID     string `json:"id"`
			Reason string `json:"reason"`
		} `json:"redo"`
	}
	_ = json.Unmarshal([]byte(raw), &verdict)
	redo := map[string]string{}
	for _, r := range verdict.Redo {
		redo[r.ID] = r.Reason
	}
	var b strings.Builder
	b.WriteString("I checked each executor output against the customer's requirement:")
	for _, o := range reOutput().FindAllStringSubmatch(prompt, -1) {
		if reason, ok := redo[o[1]]; ok && strings.HasPrefix(reason, "it answers another question") {
			fmt.Fprintf(&b, "\n- %s (%s): %s.", o[1], o[2], reason)
		} else if ok {
			fmt.Fprintf(&b, "\n- %s (%s): not yet enough; it should %s.", o[1], o[2], reason)
		} else {
			fmt.Fprintf(&b, "\n- %s (%s): answers the question with the tool's figures.", o[1], o[2])
		}
	}
	return fenced(b.String(), raw, "")
}

func reply(req model.Request, prompt string) string {
	// A follow-up that names no order is about the conversation's.
	ref := ""
	if m := reRequest().FindStringSubmatch(prompt); m != nil {
		ref = reOrder().FindString(m[1])
	}
	if ref == "" {
		ref = ticket.ConversationRef(req)
	}
	var b strings.Builder
	if strings.Contains(prompt, "SCENARIO: site-log") {
		b.WriteString("Daily report")
		if ref != "" {
			fmt.Fprintf(&b, " for %s", ref)
		}
		b.WriteString(":\n")
		for _, f := range reFinding().FindAllStringSubmatch(prompt, -1) {
			fmt.Fprintf(&b, "\n- %s", f[3])
		}
		b.WriteString("\n\nSite manager")
		return b.String()
	}
	b.WriteString("Hello,\n\nthank you for your patience")
	if ref != "" {
		fmt.Fprintf(&b, " regarding order %s", ref)
	}
	b.WriteString(". Here is what we found:\n")
	for _, f := range reFinding().FindAllStringSubmatch(prompt, -1) {
		fmt.Fprintf(&b, "\n- %s", f[3])
	}
	if strings.Contains(prompt, "NOTE: some findings are unverified") {
		b.WriteString("\n\nA few points could not be fully verified yet; a colleague will follow up by e-mail.")
	}
	b.WriteString("\n\nIf anything is unclear, just reply to this message.\n\nKind regards,\nCustomer support")
	return b.String()
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
