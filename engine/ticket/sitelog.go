package ticket

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
)

// Scenarios: what the conversation is about. A thread keeps the scenario
// its first turn set (the "scenario" channel); "" is the ticket.
const (
	ScenarioTicket  = "ticket"
	ScenarioSiteLog = "site-log"
)

// Scenarios lists the scenarios, for a flag's help and its error.
var Scenarios = []string{ScenarioTicket, ScenarioSiteLog}

// CheckScenario refuses a scenario this graph does not know.
func CheckScenario(s string) error {
	for _, k := range Scenarios {
		if s == k || s == "" {
			return nil
		}
	}
	return fmt.Errorf("unknown scenario %q: choose %s", clip(s, 40), strings.Join(Scenarios, " or "))
}

// The site log: a construction site's daily log, the seed's own example of
// what a summary must never rewrite (the excavation depth, the concrete
// batch, the day the client approved a change in writing, who signed).
// Day-log ids (DL20261012) take the place of order numbers.
var siteTopics = []topic{
	{"excavation", []string{"excavat", "dig", "depth", "trench"}, "check the surveyed excavation depth against the drawings (log %s)", "site_survey", "give the surveyed depth with its grid line and the drawing's"},
	{"concrete", []string{"concrete", "pour", "batch", "slab", "cube"}, "check the concrete batch ticket and its test cubes (log %s)", "batch_ticket", "quote the batch number, its volume and grade"},
	{"change", []string{"change order", "variation", "change", "approved", "instruction"}, "check the change order and who approved it in writing (log %s)", "change_orders", "name who signed the change order and on which day"},
	{"inspection", []string{"inspect", "inspector", "rebar", "formwork", "snag"}, "check the inspection record (log %s)", "inspection_log", "give the inspector's name and the result"},
	{"weather", []string{"weather", "rain", "wind", "frost", "storm"}, "check the weather record and lost hours (log %s)", "weather_log", "give the rainfall and the hours lost"},
	{"safety", []string{"safety", "incident", "injury", "near miss", "ppe"}, "check the safety register (log %s)", "safety_register", "give the incident number and the action taken"},
}

// siteSources are the records the site tools read.
var siteSources = map[string]string{
	"site_survey":     "surveys",
	"batch_ticket":    "batches",
	"change_orders":   "changes",
	"inspection_log":  "inspections",
	"weather_log":     "weather",
	"safety_register": "safety",
}

func init() {
	for tool, kind := range siteSources {
		SourceKinds[tool] = kind
	}
}

// topicsOf is the scenario's topic list.
func topicsOf(scenario string) []topic {
	if scenario == ScenarioSiteLog {
		return siteTopics
	}
	return topics
}

// siteTool is the site's deterministic back office; ok is false for a
// tool it does not have. said is what the log says about ref (saidAbout):
// the record agrees with it, and only what it never said is generated.
func siteTool(name, ref, said string, version int) (json.RawMessage, bool) {
	h := fnv.New32a()
	h.Write([]byte(ref))
	if version > BaseVersion {
		fmt.Fprintf(h, "#v%d", version)
	}
	n := int(h.Sum32())
	day := 1 + n%27
	grid := fmt.Sprintf("%c%d", 'A'+n%6, 1+n%9)
	var v any
	switch name {
	case "site_survey":
		v = map[string]any{"log": ref, "depth": fmt.Sprintf("%d.%02d m", 2+n%4, n%100), "grid": grid, "drawing": fmt.Sprintf("%d.%02d m", 2+n%4, (n/7)%100), "surveyedOn": fmt.Sprintf("2026-10-%02d", day)}
	case "batch_ticket":
		v = map[string]any{"log": ref, "batch": fmt.Sprintf("BT-%05d", n%100000), "volume": fmt.Sprintf("%d m3", 6+n%30), "grade": "C30/37", "cubes": "7-day 31.5 MPa"}
	case "change_orders":
		v = map[string]any{"log": ref, "changeOrder": fmt.Sprintf("CO-%04d", 1+n%9999), "approvedBy": []string{"J. Devries", "M. Okafor", "A. Lindqvist"}[n%3], "approvedOn": fmt.Sprintf("2026-10-%02d", day), "inWriting": true}
	case "inspection_log":
		v = map[string]any{"log": ref, "inspector": []string{"R. Haddad", "S. Novak"}[n%2], "result": []string{"passed", "passed with 2 snags", "failed: cover to rebar 30 mm, needs 40 mm"}[n%3]}
	case "weather_log":
		v = map[string]any{"log": ref, "rain": fmt.Sprintf("%d mm", n%25), "wind": fmt.Sprintf("%d km/h", 5+n%60), "hoursLost": fmt.Sprintf("%d hours", n%5)}
	case "safety_register":
		v = map[string]any{"log": ref, "incident": fmt.Sprintf("SR-%04d", n%10000), "action": "toolbox talk held, barrier replaced"}
	default:
		return nil, false
	}
	if version <= BaseVersion {
		seedSite(name, ref, said, v.(map[string]any))
	}
	b, _ := json.Marshal(v)
	return b, true
}

// siteResultKeys are the fields the mock executor cites from a site tool.
var siteResultKeys = []string{"depth", "grid", "drawing", "surveyedOn", "batch", "volume", "grade", "cubes", "changeOrder", "approvedBy", "approvedOn", "inspector", "result", "rain", "wind", "hoursLost", "incident", "action"}

// SiteLogDay is day n (1…) of a deterministic site log: the entries a
// lesson or a test feeds as user turns. Each day names its log id and
// facts a summary must keep verbatim.
func SiteLogDay(n int) string {
	id := fmt.Sprintf("DL2026%02d%02d", 10+(n-1)/28, 1+(n-1)%28)
	depth := fmt.Sprintf("%d.%02d m", 2+n%3, (n*37)%100)
	switch n % 4 {
	case 1:
		return fmt.Sprintf("Day %d (%s): excavation at grid C%d reached %s; please check the depth against the drawings.", n, id, 1+n%8, depth)
	case 2:
		return fmt.Sprintf("Day %d (%s): poured %d m3 of concrete for the footing, batch BT-%05d; check the batch ticket and the cubes.", n, id, 6+n%20, 10000+n*7)
	case 3:
		return fmt.Sprintf("Day %d (%s): the client approved change order CO-%04d in writing, signed by J. Devries; record who approved it. Rain stopped work for 2 hours.", n, id, 100+n)
	default:
		return fmt.Sprintf("Day %d (%s): rebar inspection on the ground beams; log the inspector and the result.", n, id)
	}
}
