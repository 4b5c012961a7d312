package ticket

import (
	"regexp"
	"strings"
	"sync"

	"rewind/engine"
)

// The mock's back office answers from records consistent with what the
// customer or the site manager wrote: the record of an order or a day log
// is seeded from the newest user message that names it, and only what the
// conversation never said is generated (from a hash of the reference). A
// tool that contradicted the log (day 3: CO-0103 signed by J. Devries, 2
// hours; the tool said CO-4502, M. Okafor, 4 hours) taught the critic to
// approve wrong numbers: the seed's "one wrong number there is an
// incident".
//
// A bumped record (version past BaseVersion: `rewind source bump`) is the
// back office's record changed since the conversation: it reads from the
// hash of its version, as before, so it reads differently.

// saidAbout is the newest user message naming ref: the verbatim tail from
// its end, then the turn's request, then the summary's user lines from the
// last. "" when the conversation never names it (or ref is empty).
func saidAbout(v engine.Values, ref string) (string, error) {
	if ref == "" {
		return "", nil
	}
	s, err := Decode(v, "messages", "request", "summary")
	if err != nil {
		return "", err
	}
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if m := s.Messages[i]; m.Role == RoleUser && strings.Contains(m.Content, ref) {
			return m.Content, nil
		}
	}
	if s.Request != nil && strings.Contains(s.Request.Text, ref) {
		return s.Request.Text, nil
	}
	es := parseSummary(s.Summary)
	for i := len(es) - 1; i >= 0; i-- {
		if e := es[i]; !e.phase && e.speakers[0] == "user" && strings.Contains(e.text, ref) {
			return e.text, nil
		}
	}
	return "", nil
}

// What a log entry or a customer's message states, read by the mock's
// tools. Each is compiled at its first use: compiling them all at init was
// a share of every process's start, whatever it ran.
var (
	reSaidDepth  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b\d+(?:\.\d+)? m\b`) })
	reSaidGrid   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bgrid (?:line )?([A-Z]{1,2}\d{1,3})\b`) })
	reSaidBatch  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bBT-\d{3,}\b`) })
	reSaidVolume = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b\d+(?:\.\d+)? ?m3\b`) })
	reSaidChange = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bCO-\d{3,}\b`) })
	reSaidSigner = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i:approved|signed(?: off)?|authori[sz]ed|confirmed) by ((?:[A-Z]\. ?)*[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)`)
	})
	reSaidHours = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(\d+) hours?\b`) })
	reSaidRain  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(\d+(?:\.\d+)?) ?mm of rain\b|\brain(?:fall)? of (\d+(?:\.\d+)?) ?mm\b`)
	})
	reSaidDate    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`) })
	reSaidLogDate = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bDL(\d{4})(\d{2})(\d{2})\b`) })
	reSaidAmount  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`[€$£]\s?\d+(?:[.,]\d+)?|\b\d+(?:[.,]\d+)?\s?(?:EUR|USD|GBP)\b`)
	})
	reSaidArrived  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(?:arrived|delivered|received)\b`) })
	reSaidNegation = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:n't|\bnot|\bnever|\byet to|\bstill)(?:\s+\w+){0,2}\s*$`)
	})
)

// logDate is the day a log id names (DL20261003: 2026-10-03), or "".
func logDate(ref string) string {
	m := reSaidLogDate().FindStringSubmatch(ref)
	if m == nil {
		return ""
	}
	return m[1] + "-" + m[2] + "-" + m[3]
}

// seedSite overrides the generated fields of a site record with what the
// log entry said about it.
func seedSite(name, ref, said string, v map[string]any) {
	date := logDate(ref)
	if d := reSaidDate().FindString(said); d != "" {
		date = d
	}
	set := func(key, val string) {
		if val != "" {
			v[key] = val
		}
	}
	switch name {
	case "site_survey":
		set("depth", reSaidDepth().FindString(said))
		if m := reSaidGrid().FindStringSubmatch(said); m != nil {
			v["grid"] = m[1]
		}
		set("surveyedOn", date)
	case "batch_ticket":
		set("batch", reSaidBatch().FindString(said))
		if vol := reSaidVolume().FindString(said); vol != "" {
			v["volume"] = strings.TrimSuffix(strings.TrimSpace(strings.TrimSuffix(vol, "m3")), " ") + " m3"
		}
	case "change_orders":
		set("changeOrder", reSaidChange().FindString(said))
		if m := reSaidSigner().FindStringSubmatch(said); m != nil {
			v["approvedBy"] = m[1]
		}
		set("approvedOn", date)
		if strings.Contains(strings.ToLower(said), "in writing") {
			v["inWriting"] = true
		}
	case "weather_log":
		if m := reSaidRain().FindStringSubmatch(said); m != nil {
			v["rain"] = m[1] + m[2] + " mm"
		}
		if strings.Contains(strings.ToLower(said), "rain") || strings.Contains(strings.ToLower(said), "weather") {
			if m := reSaidHours().FindStringSubmatch(said); m != nil {
				v["hoursLost"] = m[0]
			}
		}
	}
}

// arrived says whether the customer says the order arrived (was
// delivered, received), and not that it has not.
func arrived(said string) bool {
	for _, loc := range reSaidArrived().FindAllStringIndex(said, -1) {
		if !reSaidNegation().MatchString(said[:loc[0]]) {
			return true
		}
	}
	return false
}

// seedOrder overrides the generated fields of an order's record with what
// the customer said: an order they say arrived is delivered (and its
// address can no longer change, nor can it be cancelled), and an amount
// and a date they give are the charge's.
func seedOrder(name, said string, v map[string]any) {
	delivered := arrived(said)
	switch name {
	case "lookup_order":
		if delivered {
			v["stage"] = "delivered"
		}
	case "shipping_events":
		if delivered {
			v["lastScan"] = strings.Replace(v["lastScan"].(string), "sorting hub Utrecht", "delivered to the customer", 1)
			v["eta"] = "delivered"
		}
	case "address_change":
		if delivered {
			v["changeable"] = false
			v["until"] = "delivered: too late to change"
		}
	case "cancel_check":
		if delivered {
			v["cancellable"] = false
			v["fee"] = "delivered: return it instead"
		}
	case "payment_lookup":
		charge := v["charges"].([]map[string]any)[0]
		if a := reSaidAmount().FindString(said); a != "" {
			charge["amount"] = a
		}
		if d := reSaidDate().FindString(said); d != "" {
			charge["date"] = d
		}
	}
}
