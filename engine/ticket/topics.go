package ticket

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// topic is a kind of subtask the mock planner recognises, with the tool an
// executor calls for it.
type topic struct {
	name     string
	keywords []string
	goal     string // %s is the order reference
	tool     string
	redo     string // what the critic asks for on a bounce
}

var topics = []topic{
	{"order", []string{"order status", "stage", "status", "order"}, "look up the order status and describe the current stage (order %s)", "lookup_order", "name the warehouse stage and when it was entered"},
	{"shipping", []string{"shipping", "ship", "deliver", "arrive", "arrived", "parcel", "package", "tracking", "where is"}, "look up shipping events and give an estimated delivery time (order %s)", "shipping_events", "cite the latest carrier scan with its time and place"},
	{"refund", []string{"refund", "money back", "reimburse", "return"}, "check refund eligibility and explain the refund path (order %s)", "refund_policy", "state the refund window and the payment method it goes back to"},
	{"address", []string{"address", "relocat", "moved"}, "check whether the delivery address can still be changed (order %s)", "address_change", "say until when the address can be changed"},
	{"invoice", []string{"invoice", "receipt", "vat", "tax"}, "find the invoice and check its billing details (order %s)", "invoice_lookup", "quote the invoice number and the VAT rate"},
	{"warranty", []string{"warranty", "broken", "damaged", "damage", "defect", "repair"}, "check warranty coverage for the damaged item (order %s)", "warranty_check", "give the warranty end date and what it covers"},
	{"cancel", []string{"cancel"}, "check whether the order can still be cancelled (order %s)", "cancel_check", "say whether cancellation is still free"},
	{"payment", []string{"charged", "charge", "payment", "card", "billing", "paid"}, "check the payments taken for the order (order %s)", "payment_lookup", "list each charge with its amount and date"},
}

var orderRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b[A-Z]{2}\d{6,12}\b`) })

var addressPhrases = strings.NewReplacer("delivery address", "address", "shipping address", "address", "deliver it to", "address")

// MaxSubtasks caps how many subtasks the planner makes.
const MaxSubtasks = 4

// plan splits a request into subtasks, ordered by where each topic first
// appears in the text.
func plan(request string) []Subtask { return planIn(ScenarioTicket, request) }

// planIn is plan with the scenario's topics.
func planIn(scenario, request string) []Subtask {
	ref := orderRef().FindString(request)
	if ref == "" {
		ref = "no order number given"
		if scenario == ScenarioSiteLog {
			ref = "no log id given"
		}
	}
	// "the delivery address" is about the address, not about a delivery.
	lower := addressPhrases.Replace(strings.ToLower(request))
	type hit struct {
		keywordAt int // where the topic's first keyword is in the request
		t         topic
	}
	var hits []hit
	for _, t := range topicsOf(scenario) {
		best := -1
		for _, k := range t.keywords {
			if p := wordIndex(lower, k); p >= 0 && (best < 0 || p < best) {
				best = p
			}
		}
		if best >= 0 {
			hits = append(hits, hit{best, t})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].keywordAt < hits[j].keywordAt })
	if len(hits) > MaxSubtasks {
		hits = hits[:MaxSubtasks]
	}
	var out []Subtask
	for i, h := range hits {
		out = append(out, Subtask{ID: fmt.Sprintf("t-%d-%s", i+1, h.t.name), Goal: fmt.Sprintf(h.t.goal, ref), Topic: h.t.name, Status: StatusPending})
	}
	if len(out) == 0 {
		out = []Subtask{{ID: "t-1-general", Goal: "answer the request: " + clip(request, 120), Topic: "general", Status: StatusPending}}
	}
	return out
}

// wordIndex finds k in s at a word start, so "cancel" does not match inside
// another word's tail and "ship" matches "shipping".
func wordIndex(s, k string) int {
	for from := 0; from < len(s); {
		p := strings.Index(s[from:], k)
		if p < 0 {
			return -1
		}
		p += from
		if p == 0 || !isLetter(s[p-1]) {
			return p
		}
		from = p + 1
	}
	return -1
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' }

func topicOf(name string) topic {
	for _, ts := range [][]topic{topics, siteTopics} {
		for _, t := range ts {
			if t.name == name {
				return t
			}
		}
	}
	return topic{name: "general", tool: "search_kb", redo: "quote the knowledge-base article you relied on"}
}

func refOf(goal string) string {
	if r := orderRef().FindString(goal); r != "" {
		return r
	}
	return ""
}

// runTool is the deterministic fake back office the executors query: the
// record of ref at version (see Sources), consistent with said, what the
// conversation says about ref (records.go). A bumped record reads
// differently, as a changed order would.
func runTool(name, ref, said string, round, version int) json.RawMessage {
	if b, ok := siteTool(name, ref, said, version); ok {
		return b
	}
	h := fnv.New32a()
	h.Write([]byte(ref))
	if version > BaseVersion {
		fmt.Fprintf(h, "#v%d", version)
	}
	n := int(h.Sum32())
	day := 2 + n%6
	var v any
	switch name {
	case "lookup_order":
		v = map[string]any{"order": ref, "stage": []string{"packed", "handed to carrier", "in transit", "at local depot"}[n%4], "since": fmt.Sprintf("2026-09-%02d 09:%02d", day, n%60), "items": 1 + n%3}
	case "shipping_events":
		v = map[string]any{"order": ref, "carrier": []string{"DHL", "UPS", "PostNL"}[n%3], "lastScan": fmt.Sprintf("2026-09-%02d 14:%02d sorting hub Utrecht", day+1, n%60), "eta": fmt.Sprintf("2026-09-%02d", day+3)}
	case "refund_policy":
		v = map[string]any{"order": ref, "eligible": n%5 != 0, "window": "30 days from delivery", "method": "original payment method, 3-5 working days"}
	case "address_change":
		v = map[string]any{"order": ref, "changeable": n%2 == 0, "until": fmt.Sprintf("2026-09-%02d 18:00", day)}
	case "invoice_lookup":
		v = map[string]any{"order": ref, "invoice": fmt.Sprintf("INV-%06d", n%1000000), "vat": "21%", "billedTo": "as on the account"}
	case "warranty_check":
		v = map[string]any{"order": ref, "covered": true, "until": "2028-09-01", "covers": "manufacturing defects, not drops"}
	case "cancel_check":
		v = map[string]any{"order": ref, "cancellable": n%3 != 0, "fee": "none before handover to the carrier"}
	case "payment_lookup":
		v = map[string]any{"order": ref, "charges": []map[string]any{{"amount": fmt.Sprintf("%d.%02d EUR", 20+n%180, n%100), "date": fmt.Sprintf("2026-09-%02d", day-1)}}}
	default:
		v = map[string]any{"article": fmt.Sprintf("KB-%04d", n%10000), "round": round}
	}
	if m, ok := v.(map[string]any); ok && version <= BaseVersion {
		seedOrder(name, said, m)
	}
	b, _ := json.Marshal(v)
	return b
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
