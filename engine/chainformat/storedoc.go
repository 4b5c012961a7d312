package chainformat

import (
	"encoding/binary"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Reading one checkpoint decodes every row of its chain, so the stored
// documents of this format are read by hand: one pass over each, no
// reflection, values kept as sub-slices of the row. Each reader reads only
// the forms rewind writes and gives exactly what encoding/json gives for
// them; anything else (an older format, an escape in a name, a duplicate
// key, a value of an unexpected kind, bad JSON) makes it give up, and the
// caller decodes the document with encoding/json as before, errors and
// all. TestFastReadersAgree and the random histories compare the two on
// stored rows of every store.

// rd walks a JSON document. Every method leaves r.i past what it read and
// returns false on anything it does not read (the caller gives up).
type rd struct {
	b []byte
	i int
}

func (r *rd) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space (0 at the end).
func (r *rd) peek() byte {
	r.ws()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// eat consumes c if it is next.
func (r *rd) eat(c byte) bool {
	if r.peek() == c {
		r.i++
		return true
	}
	return false
}

// end: nothing but white space is left.
func (r *rd) end() bool {
	r.ws()
	return r.i == len(r.b)
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// value skips one JSON value, checking it as encoding/json's scanner does,
// and returns its bytes.
func (r *rd) value() ([]byte, bool) {
	r.ws()
	start := r.i
	if !r.skip(0) {
		return nil, false
	}
	return r.b[start:r.i], true
}

func (r *rd) skip(depth int) bool {
	if r.i >= len(r.b) {
		return false
	}
	switch c := r.b[r.i]; {
	case c == '"':
		return r.skipString()
	case c == '{':
		if depth >= maxDepth {
			return false
		}
		r.i++
		if r.eat('}') {
			return true
		}
		for {
			if r.peek() != '"' || !r.skipString() || !r.eat(':') {
				return false
			}
			r.ws()
			if !r.skip(depth + 1) {
				return false
			}
			if r.eat(',') {
				continue
			}
			return r.eat('}')
		}
	case c == '[':
		if depth >= maxDepth {
			return false
		}
		r.i++
		if r.eat(']') {
			return true
		}
		for {
			r.ws()
			if !r.skip(depth + 1) {
				return false
			}
			if r.eat(',') {
				continue
			}
			return r.eat(']')
		}
	case c == '-' || c >= '0' && c <= '9':
		return r.skipNumber()
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	}
	return false
}

func (r *rd) literal(s string) bool {
	if len(r.b)-r.i < len(s) || string(r.b[r.i:r.i+len(s)]) != s {
		return false
	}
	r.i += len(s)
	return true
}

func (r *rd) skipString() bool {
	r.i++ // the quote
	for r.i < len(r.b) {
		// Eight plain bytes at a time: message texts are most of a
		// head snapshot, and a byte at a time was most of reading one.
		for len(r.b)-r.i >= 8 && !stringStop(binary.LittleEndian.Uint64(r.b[r.i:])) {
			r.i += 8
		}
		if r.i >= len(r.b) {
			break
		}
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			r.i++
			if r.i >= len(r.b) {
				return false
			}
			switch r.b[r.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				r.i++
			case 'u':
				if len(r.b)-r.i < 5 {
					return false
				}
				for _, h := range r.b[r.i+1 : r.i+5] {
					if !isHex(h) {
						return false
					}
				}
				r.i += 5
			default:
				return false
			}
		default:
			r.i++
		}
	}
	return false
}

// stringStop says whether any of w's eight bytes ends a plain run of a
// JSON string: a quote, a backslash or a control character. It is the
// has-a-byte-less-than-n test (exact as to whether one is, though it may
// flag a later byte too: the byte loop reads them one by one).
func stringStop(w uint64) bool {
	return byteBelow(w^(ones*'"'), 1) || byteBelow(w^(ones*'\\'), 1) || byteBelow(w, 0x20)
}

const ones, tops = 0x0101010101010101, 0x8080808080808080

// byteBelow says whether a byte of x is below n (n at most 0x80).
func byteBelow(x, n uint64) bool { return (x-ones*n)&^x&tops != 0 }

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (r *rd) skipNumber() bool {
	b, i := r.b, r.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	r.i = i
	return true
}

// str reads a string that needs no unescaping (none of rewind's names and
// keys do): an escape or invalid UTF-8 gives up.
func (r *rd) str() (string, bool) {
	if r.peek() != '"' {
		return "", false
	}
	start := r.i + 1
	for j := start; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			s := r.b[start:j]
			if !isASCII(s) && !utf8.Valid(s) {
				return "", false
			}
			r.i = j + 1
			return string(s), true
		case c == '\\' || c < 0x20:
			return "", false
		}
	}
	return "", false
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// int reads a number into an int as encoding/json does: a whole number
// in range, written without a fraction or exponent.
func (r *rd) int() (int64, bool) {
	r.ws()
	start := r.i
	if !r.skipNumber() {
		return 0, false
	}
	n, err := strconv.ParseInt(string(r.b[start:r.i]), 10, 64)
	return n, err == nil
}

// strList reads a list of strings (checks it only, unless keep).
func (r *rd) strList(keep bool) ([]string, bool) {
	if !r.eat('[') {
		return nil, false
	}
	var out []string
	if keep {
		out = []string{}
	}
	if r.eat(']') {
		return out, true
	}
	for {
		s, ok := r.str()
		if !ok {
			return nil, false
		}
		if keep {
			out = append(out, s)
		}
		if r.eat(',') {
			continue
		}
		return out, r.eat(']')
	}
}

// ints reads a list of whole numbers.
func (r *rd) ints() ([]int, bool) {
	if !r.eat('[') {
		return nil, false
	}
	out := []int{}
	if r.eat(']') {
		return out, true
	}
	for {
		n, ok := r.int()
		if !ok {
			return nil, false
		}
		out = append(out, int(n))
		if r.eat(',') {
			continue
		}
		return out, r.eat(']')
	}
}

// object reads an object's members, calling member with r at each value,
// which it must read. Duplicate keys give up (encoding/json merges them
// into what the first decoded).
func (r *rd) object(member func(key string) bool) bool {
	if !r.eat('{') {
		return false
	}
	if r.eat('}') {
		return true
	}
	var seen []string
	for {
		k, ok := r.str()
		if !ok || !r.eat(':') {
			return false
		}
		for _, s := range seen {
			if s == k {
				return false
			}
		}
		seen = append(seen, k)
		if !member(k) {
			return false
		}
		if r.eat(',') {
			continue
		}
		return r.eat('}')
	}
}

// tokens reads {"role": [calls, prompt, completion], …} (checks it
// only, unless keep).
func (r *rd) tokens(keep bool) (map[string][3]int, bool) {
	var out map[string][3]int
	if keep {
		out = map[string][3]int{}
	}
	ok := r.object(func(k string) bool {
		t, ok := r.triple()
		if ok && keep {
			out[k] = t
		}
		return ok
	})
	return out, ok
}

// triple reads one role's [calls, prompt, completion] (shorter or longer
// lists read too: what is past the third is checked and dropped).
func (r *rd) triple() ([3]int, bool) {
	var t [3]int
	if !r.eat('[') {
		return t, false
	}
	for j := 0; ; j++ {
		if j == 0 && r.eat(']') {
			return t, true
		}
		n, ok := r.int()
		if !ok {
			return t, false
		}
		if j < 3 {
			t[j] = int(n)
		}
		if r.eat(',') {
			continue
		}
		return t, r.eat(']')
	}
}

// tokenSum reads {"role": [calls, prompt, completion], …} into sum:
// the calls summed and the roles (Schema.Brief), no map.
func (r *rd) tokenSum(sum *roleSum) bool {
	if sum == nil { // the running totals, which a brief listing skips
		_, ok := r.tokens(false)
		return ok
	}
	*sum = roleSum{set: true}
	return r.object(func(k string) bool {
		t, ok := r.triple()
		if ok {
			sum.calls += t[0]
			sum.roles = append(sum.roles, k)
		}
		return ok
	})
}

// callSum reads {"role": n, …} into sum (its roles left out: Brief
// names none).
func (r *rd) callSum(sum *roleSum) bool {
	*sum = roleSum{set: true}
	return r.object(func(string) bool {
		n, ok := r.int()
		sum.calls += int(n)
		return ok
	})
}

// briefed is l as listBrief keeps it: without the running totals and
// the run mark, its model calls and tokens summed (roleSum).
func (l listing) briefed() listing {
	l.SumTurns, l.SumThread, l.SumBranch, l.Run = 0, nil, nil, nil
	l.brief = briefCounts{calls: sumRoles(l.ModelCalls, func(n int) int { return n }),
		tokens: sumRoles(l.Tokens, func(t [3]int) int { return t[0] }), oldTokens: sumRoles(l.OldTokens, func(t [3]int) int { return t[0] })}
	l.brief.calls.roles = nil // as callSum: Brief names the tokens' roles alone
	l.ModelCalls, l.Tokens, l.OldTokens = nil, nil, nil
	return l
}

// sumRoles is m summed as roleSum, its roles sorted.
func sumRoles[V any](m map[string]V, calls func(V) int) roleSum {
	if m == nil {
		return roleSum{}
	}
	s := roleSum{set: true, roles: slices.Sorted(maps.Keys(m))}
	for _, v := range m {
		s.calls += calls(v)
	}
	return s
}

// counts reads {"role": n, …} (checks it only, unless keep).
func (r *rd) counts(keep bool) (map[string]int, bool) {
	var out map[string]int
	if keep {
		out = map[string]int{}
	}
	ok := r.object(func(k string) bool {
		n, ok := r.int()
		if keep {
			out[k] = int(n)
		}
		return ok
	})
	return out, ok
}

// listPart is how much of a listing a reader keeps; it checks the rest.
type listPart int

const (
	// listWhole keeps every field.
	listWhole listPart = iota
	// listCore keeps the schema version, depth and format (what a replay
	// needs) and the events stored (what a resume's continuity check
	// needs).
	listCore
	// listBrief keeps all but the running totals and the run mark (what
	// a log's line shows: Schema.Brief).
	listBrief
)

// readListing reads a stored listing of format 3 (an array) as
// listing.UnmarshalJSON does, keeping part of it.
func readListing(b []byte, l *listing, part listPart) bool {
	r := rd{b: b}
	if !r.eat('[') {
		return false // an object: a listing of format 2
	}
	*l = listing{}
	if !r.eat(']') {
		for i := 0; ; i++ {
			r.ws()
			start := r.i
			v, ok := r.value()
			if !ok {
				return false
			}
			switch string(v) {
			case "0", `""`, "null", "false":
			default:
				r.i = start
				if !l.readField(&r, i, part) {
					return false
				}
			}
			if r.eat(',') {
				continue
			}
			if !r.eat(']') {
				return false
			}
			break
		}
	}
	if !r.end() {
		return false
	}
	if l.format == 0 {
		l.format = 3
	}
	return true
}

// readField reads position i of a listing (see listingFields) at r.
func (l *listing) readField(r *rd, i int, part listPart) bool {
	// core: checked, and kept only if it is what listCore keeps.
	core := part == listCore || part == listBrief && i >= 21 && i <= 24
	num := func(dst *int) bool {
		n, ok := r.int()
		if ok && (!core || dst == &l.SchemaVersion || dst == &l.Depth || dst == &l.format || dst == &l.Events) {
			*dst = int(n)
		}
		return ok
	}
	text := func(dst *string) bool {
		s, ok := r.str()
		if !core {
			*dst = s
		}
		return ok
	}
	list := func(dst *[]string) bool {
		s, ok := r.strList(!core)
		if !core {
			*dst = s
		}
		return ok
	}
	tokens := func(dst *map[string][3]int, sum *roleSum) bool {
		if part == listBrief {
			return r.tokenSum(sum)
		}
		t, ok := r.tokens(!core)
		if !core {
			*dst = t
		}
		return ok
	}
	switch i {
	case 0:
		return num(&l.Step)
	case 1:
		return num(&l.SchemaVersion)
	case 2:
		return num(&l.Depth)
	case 3:
		return num(&l.Messages)
	case 4:
		return num(&l.Row)
	case 5:
		return num(&l.Bytes)
	case 6:
		return tokens(&l.Tokens, &l.brief.tokens)
	case 7:
		return list(&l.Next)
	case 8:
		return num(&l.Events)
	case 9:
		return text(&l.Status)
	case 10:
		return text(&l.Source)
	case 11:
		return list(&l.Nodes)
	case 12:
		if part == listBrief {
			return r.callSum(&l.brief.calls)
		}
		c, ok := r.counts(!core)
		if !core {
			l.ModelCalls = c
		}
		return ok
	case 13:
		v, ok := r.value()
		var it *Interrupt
		if !ok || json.Unmarshal(v, &it) != nil {
			return false
		}
		if !core {
			l.Interrupt = it
		}
		return true
	case 14:
		n, ok := r.int()
		if !core {
			l.ForkedFrom = n
		}
		return ok
	case 15:
		if !r.literal("true") {
			return false
		}
		l.Replay = !core
		return true
	case 16:
		return text(&l.AsNode)
	case 17:
		return list(&l.Reused)
	case 18:
		return text(&l.Reason)
	case 19:
		return tokens(&l.OldTokens, &l.brief.oldTokens)
	case 20:
		return num(&l.format)
	case 21:
		return num(&l.SumTurns)
	case 22:
		return tokens(&l.SumThread, nil)
	case 23:
		return tokens(&l.SumBranch, nil)
	case 24:
		return list(&l.Run)
	case 25:
		return list(&l.Fixes)
	case 26:
		return text(&l.Graph)
	}
	_, ok := r.value() // a newer rewind's field
	return ok
}

// decodeListing reads a stored listing, by hand when it can, keeping
// part of it.
func decodeListing(b []byte, l *listing, part listPart) error {
	if readListing(b, l, part) {
		return nil
	}
	var slow listing // on the heap only when it is needed
	err := json.Unmarshal(b, &slow)
	switch part {
	case listCore:
		slow = listing{SchemaVersion: slow.SchemaVersion, Depth: slow.Depth, format: slow.format, Events: slow.Events}
	case listBrief:
		slow = slow.briefed()
	}
	*l = slow
	return err
}

// stateKeys are the keys of a state document, as its readers know them.
var stateKeys = []string{"format", "tasks", "writes", "values", "usage", "durationMs", "discarded"}

// readStateDoc reads a state document of format 3 (or 2, with its groups
// stored as arrays) into doc, as json.Unmarshal does. core reads what a
// replay needs (format, groups, values; tasks kept raw in tasks) and
// ignores the rest, as parseRow's short form does.
func readStateDoc(b []byte, doc *stateDoc, core bool, tasks *json.RawMessage) bool {
	r := rd{b: b}
	*doc = stateDoc{}
	ok := r.object(func(k string) bool {
		switch k {
		case "format":
			n, ok := r.int()
			doc.Format = int(n)
			return ok
		case "tasks":
			if core {
				v, ok := r.value()
				*tasks = v
				return ok
			}
			ts, ok := r.tasks()
			doc.Tasks = ts
			return ok
		case "writes":
			gs, ok := r.groups()
			doc.Groups = gs
			return ok
		case "values":
			vs, ok := r.rawObject()
			doc.Values = vs
			return ok
		}
		for _, known := range stateKeys {
			if strings.EqualFold(k, known) { // as encoding/json matches keys to fields
				if core && (known == "usage" || known == "durationMs" || known == "discarded") {
					break // parseRow's short form has no such field
				}
				if k != known || core {
					return false // encoding/json would match it to a field
				}
				v, ok := r.value()
				if !ok {
					return false
				}
				switch k { // (into locals: doc stays where the caller has it)
				case "usage":
					var u *usage
					err := json.Unmarshal(v, &u)
					doc.Usage = u
					return err == nil
				case "durationMs":
					n, err := strconv.ParseInt(string(v), 10, 64)
					doc.Duration = n
					return err == nil
				default:
					var ts []Task
					err := json.Unmarshal(v, &ts)
					doc.Discarded = ts
					return err == nil
				}
			}
		}
		_, ok := r.value() // a key no field takes
		return ok
	})
	return ok && r.end()
}

// rawObject reads an object of any values, kept as they are.
func (r *rd) rawObject() (map[string]json.RawMessage, bool) {
	if r.peek() != '{' {
		return nil, false
	}
	out := map[string]json.RawMessage{}
	ok := r.object(func(k string) bool {
		v, ok := r.value()
		out[k] = v
		return ok
	})
	return out, ok
}

// readTasks reads b, a document's tasks as rewind stores them, as
// encoding/json's Unmarshal into storedTasks does; not ok for any other
// form (ask encoding/json).
func readTasks(b []byte) (storedTasks, bool) {
	r := rd{b: b}
	ts, ok := r.tasks()
	return ts, ok && r.end()
}

// tasks reads a document's pending tasks: [{"id", "node", "args"}, …].
func (r *rd) tasks() (storedTasks, bool) {
	if !r.eat('[') {
		return nil, false
	}
	out := storedTasks{}
	if r.eat(']') {
		return out, true
	}
	for {
		var t Task
		ok := r.object(func(k string) bool {
			var ok bool
			switch k {
			case "id":
				t.ID, ok = r.str()
			case "node":
				t.Node, ok = r.str()
			case "args":
				if r.peek() == 'n' {
					return false // json keeps null as the bytes null
				}
				t.Args, ok = r.value()
			default:
				return false // json folds case: give up on any other key
			}
			return ok
		})
		if !ok {
			return nil, false
		}
		out = append(out, t)
		if r.eat(',') {
			continue
		}
		return out, r.eat(']')
	}
}

// groups reads a document's write groups, each stored as [node, task,
// writes, calls, ms, refs] (see writeGroup.UnmarshalJSON).
func (r *rd) groups() ([]writeGroup, bool) {
	if !r.eat('[') {
		return nil, false
	}
	out := []writeGroup{}
	if r.eat(']') {
		return out, true
	}
	for {
		var g writeGroup
		if !r.group(&g) {
			return nil, false
		}
		out = append(out, g)
		if r.eat(',') {
			continue
		}
		return out, r.eat(']')
	}
}

func (r *rd) group(g *writeGroup) bool {
	if !r.eat('[') {
		return false // an object: a group of format 2
	}
	var ok bool
	if g.Node, ok = r.str(); !ok || !r.eat(',') {
		return false
	}
	switch c := r.peek(); {
	case c == '"':
		if g.Task, ok = r.str(); !ok {
			return false
		}
	case c == 'n':
		if !r.literal("null") {
			return false
		}
	default:
		n, ok := r.int()
		if !ok {
			return false
		}
		k := int(n)
		g.Packet = &k
	}
	if !r.eat(',') || !r.eat('[') {
		return false
	}
	g.Writes = []storedWrite{}
	if !r.eat(']') {
		for {
			if !r.eat('[') {
				return false
			}
			var w storedWrite
			if w.Channel, ok = r.str(); !ok || !r.eat(',') {
				return false
			}
			if w.Value, ok = r.value(); !ok || !r.eat(']') {
				return false
			}
			g.Writes = append(g.Writes, w)
			if r.eat(',') {
				continue
			}
			if !r.eat(']') {
				return false
			}
			break
		}
	}
	for pos := 3; ; pos++ {
		if r.eat(']') {
			return true
		}
		if !r.eat(',') {
			return false
		}
		switch pos {
		case 3:
			if r.peek() == '0' {
				if v, ok := r.value(); !ok || string(v) != "0" {
					return false
				}
				continue
			}
			if g.Calls, ok = r.calls(); !ok {
				return false
			}
		case 4:
			if g.Ms, ok = r.int(); !ok {
				return false
			}
		case 5:
			if g.Refs, ok = r.ints(); !ok {
				return false
			}
		default:
			if _, ok := r.value(); !ok {
				return false
			}
		}
	}
}

// calls reads a group's model calls (see storedCall.UnmarshalJSON).
func (r *rd) calls() ([]storedCall, bool) {
	if !r.eat('[') {
		return nil, false
	}
	out := []storedCall{}
	if r.eat(']') {
		return out, true
	}
	for {
		var c storedCall
		if !r.eat('[') {
			return nil, false
		}
		for j := 0; ; j++ {
			if j > 0 && !r.eat(',') {
				if j < 5 || !r.eat(']') {
					return nil, false
				}
				break
			}
			var ok bool
			switch j {
			case 0:
				if r.peek() == '0' {
					c.sameRole, ok = true, r.literal("0")
				} else {
					c.Role, ok = r.str()
				}
			case 1, 2:
				var n int64
				n, ok = r.int()
				if j == 1 {
					c.Prompt = int(n)
				} else {
					c.Completion = int(n)
				}
			case 3:
				c.Ms, ok = r.int()
			case 4:
				c.At, ok = r.int()
			case 5:
				c.Err, ok = r.str()
			case 6:
				c.Mode, ok = r.str()
			case 7:
				c.Req, ok = r.str()
			case 8:
				if ok = r.peek() == '"'; ok {
					c.Answer, ok = r.text()
				}
			default:
				_, ok = r.value()
			}
			if !ok {
				return nil, false
			}
		}
		out = append(out, c)
		if r.eat(',') {
			continue
		}
		return out, r.eat(']')
	}
}

// decodeStateDoc reads a state document, by hand when it can (see
// readStateDoc).
func decodeStateDoc(b []byte, doc *stateDoc) error {
	if readStateDoc(b, doc, false, nil) {
		return nil
	}
	var slow stateDoc
	err := json.Unmarshal(b, &slow)
	*doc = slow
	return err
}

// coreDoc is the part of a state document a replay reads: what parseRow
// decodes of a row that is not its chain's head.
type coreDoc struct {
	Format int                        `json:"format"`
	Tasks  json.RawMessage            `json:"tasks"`
	Groups []writeGroup               `json:"writes"`
	Values map[string]json.RawMessage `json:"values"`
}

// decodeCoreDoc reads the core of a state document, by hand when it can.
func decodeCoreDoc(b []byte) (coreDoc, error) {
	var doc stateDoc
	var tasks json.RawMessage
	if readStateDoc(b, &doc, true, &tasks) {
		return coreDoc{Format: doc.Format, Tasks: tasks, Groups: doc.Groups, Values: doc.Values}, nil
	}
	var d coreDoc
	err := json.Unmarshal(b, &d)
	return d, err
}

// readAny decodes one JSON value as a json.Decoder with UseNumber does
// (objects as map[string]any, lists as []any, numbers as json.Number); ok
// false: give up (an escape of a UTF-16 surrogate, invalid UTF-8, bad
// JSON, anything after the value).
func readAny(b []byte) (any, bool) {
	r := rd{b: b}
	v, ok := r.any(0)
	if !ok || !r.end() {
		return nil, false
	}
	return v, true
}

func (r *rd) any(depth int) (any, bool) {
	switch c := r.peek(); {
	case c == '{':
		if depth >= maxDepth {
			return nil, false
		}
		r.i++
		m := map[string]any{}
		if r.eat('}') {
			return m, true
		}
		for {
			if r.peek() != '"' {
				return nil, false
			}
			k, ok := r.text()
			if !ok || !r.eat(':') {
				return nil, false
			}
			v, ok := r.any(depth + 1)
			if !ok {
				return nil, false
			}
			m[k] = v // the last of duplicate keys wins, as in encoding/json
			if r.eat(',') {
				continue
			}
			return m, r.eat('}')
		}
	case c == '[':
		if depth >= maxDepth {
			return nil, false
		}
		r.i++
		l := []any{}
		if r.eat(']') {
			return l, true
		}
		for {
			v, ok := r.any(depth + 1)
			if !ok {
				return nil, false
			}
			l = append(l, v)
			if r.eat(',') {
				continue
			}
			return l, r.eat(']')
		}
	case c == '"':
		return r.text()
	case c == '-' || c >= '0' && c <= '9':
		start := r.i
		if !r.skipNumber() {
			return nil, false
		}
		return json.Number(r.b[start:r.i]), true
	case c == 't':
		return true, r.literal("true")
	case c == 'f':
		return false, r.literal("false")
	case c == 'n':
		return nil, r.literal("null")
	}
	return nil, false
}

// text reads a string, unescaping it.
func (r *rd) text() (string, bool) {
	start := r.i + 1
	j := start
	for ; j < len(r.b); j++ {
		c := r.b[j]
		if c == '"' {
			s := r.b[start:j]
			if !isASCII(s) && !utf8.Valid(s) {
				return "", false
			}
			r.i = j + 1
			return string(s), true
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", false
		}
	}
	out := make([]byte, 0, j-start+16)
	out = append(out, r.b[start:j]...)
	for j < len(r.b) {
		c := r.b[j]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return "", false
			}
			r.i = j + 1
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(r.b) {
			return "", false
		}
		switch e := r.b[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if len(r.b)-j < 6 {
				return "", false
			}
			n, err := strconv.ParseUint(string(r.b[j+2:j+6]), 16, 32)
			if err != nil || n >= 0xd800 && n < 0xe000 {
				return "", false // a surrogate: left to encoding/json
			}
			out = utf8.AppendRune(out, rune(n))
			j += 4
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}

// readObjects decodes a list of objects as decodeList's json.Decoder does;
// ok false: give up (a null item, or anything readAny gives up on).
func readObjects(b []byte) ([]map[string]any, bool) {
	v, ok := readAny(b)
	l, isList := v.([]any)
	if !ok || !isList {
		return nil, false
	}
	out := make([]map[string]any, len(l))
	for i, it := range l {
		if out[i], ok = it.(map[string]any); !ok {
			return nil, false
		}
	}
	return out, true
}
