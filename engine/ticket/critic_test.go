package ticket

import (
	"encoding/json"
	"testing"

	"rewind/engine/model"
)

// The mock critic judges each output against the requirement it can find
// by its coordinates: the task's REQUIREMENT line, else the summary's
// newest "#N user:" line. A summary flattened into a narrative leaves it
// nothing to check against, and it approves (the narrative-summary
// lesson).
func TestCriticFindsTheRequirementByItsCoordinates(t *testing.T) {
	t.Parallel()
	const (
		asked     = "Can I get a refund for SO20260901? Please also send me the invoice."
		offTopic  = "OUTPUT t-1-refund [refund]: t-1-refund: carrier DHL, lastScan 2026-09-04 14:07 sorting hub Utrecht, eta 2026-09-06.\n"
		onTopic   = "OUTPUT t-2-invoice [invoice]: t-2-invoice: invoice INV-176161, vat 21%.\n"
		refundOK  = "OUTPUT t-1-refund [refund]: t-1-refund: eligible true, window 30 days from delivery, method original payment method.\n"
		standIn   = "OUTPUT t-1-refund [refund]: shipping_events shows the parcel is with DHL; the latest scan was 2026-09-04 14:07.\n"
		offReason = "it answers another question (shipping): #1 user asked about invoice, refund"
	)
	summary := func(text string) model.Message {
		return model.Message{Role: model.ChatSystem, Content: "SUMMARY of messages #1–#1 (history version 0).\n" + text, Part: model.PartSummary}
	}
	cases := []struct {
		name    string
		conv    []model.Message
		task    string
		redo    map[string]string
		approve []string
	}{
		{"the task's requirement", nil, "REVIEW ROUND 1\nREQUIREMENT #1 user: " + asked + "\n" + offTopic + onTopic,
			map[string]string{"t-1-refund": offReason}, []string{"t-2-invoice"}},
		{"the summary's #1 user: line", []model.Message{summary("#1 user: " + asked)}, "REVIEW ROUND 1\n" + offTopic + onTopic,
			map[string]string{"t-1-refund": offReason}, []string{"t-2-invoice"}},
		{"a chat model's prose", []model.Message{summary("#1 user: " + asked)}, "REVIEW ROUND 2\n" + standIn,
			map[string]string{"t-1-refund": offReason}, []string{}},
		{"a flattened summary", []model.Message{summary("the user asked about orders and refunds, and the assistant proposed a plan")}, "REVIEW ROUND 1\n" + offTopic + onTopic,
			map[string]string{}, []string{"t-1-refund", "t-2-invoice"}},
		// What every ticket run sees: outputs that answer what was asked,
		// the first round bouncing one back, the second approving.
		{"outputs on the question, round 1", nil, "REVIEW ROUND 1\nREQUIREMENT #1 user: " + asked + "\n" + refundOK + onTopic,
			map[string]string{"t-2-invoice": "quote the invoice number and the VAT rate"}, []string{"t-1-refund"}},
		{"outputs on the question, round 2", nil, "REVIEW ROUND 2\nREQUIREMENT #1 user: " + asked + "\n" + refundOK + onTopic,
			map[string]string{}, []string{"t-1-refund", "t-2-invoice"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ms := append([]model.Message{{Role: model.ChatSystem, Content: criticSystem, Part: model.PartInstructions}}, c.conv...)
			ms = append(ms, model.Message{Role: model.ChatUser, Content: c.task, Part: model.PartInstructions})
			resp, err := Respond(model.Request{Role: model.RoleCritic, Messages: ms})
			if err != nil {
				t.Fatal(err)
			}
			var v struct {
				Approve []string `json:"approve"`
				Redo    []struct{ ID, Reason string }
			}
			if err := json.Unmarshal([]byte(resp.Text), &v); err != nil {
				t.Fatal(err)
			}
			redo := map[string]string{}
			for _, r := range v.Redo {
				redo[r.ID] = r.Reason
			}
			if len(redo) != len(c.redo) {
				t.Errorf("redo %v, want %v", redo, c.redo)
			}
			for id, reason := range c.redo {
				if redo[id] != reason {
					t.Errorf("redo %s: %q, want %q", id, redo[id], reason)
				}
			}
			if len(v.Approve) != len(c.approve) {
				t.Fatalf("approved %v, want %v", v.Approve, c.approve)
			}
			for i := range c.approve {
				if v.Approve[i] != c.approve[i] {
					t.Errorf("approved %v, want %v", v.Approve, c.approve)
				}
			}
		})
	}
}
