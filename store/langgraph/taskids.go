package langgraph

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"rewind/store/langgraph/internal/xxh3"
)

// LangGraph's task ids are deterministic: a hash of the checkpoint the
// task runs from, its namespace, the step, the node and what triggered it
// (langgraph's pregel/_algo.py, langgraphjs's pregel/algo.ts). A write
// without a task_path (Python's SqliteSaver, both LangGraph.js savers) is
// named by finding the node whose id is its task's:
//
//   - LangGraph.js: uuid5(JSON.stringify([ns, step, node, "__pregel_pull",
//     [trigger]]), checkpoint id), and for the Nth queued Send
//     [ns, step, node, "__pregel_push", "N"];
//   - Python: the checkpoint id's bytes and the parts (ns, step, node,
//     "__pregel_pull", the triggers…, or "__pregel_push" and the Send's
//     index) concatenated and hashed, printed as a UUID without version
//     bits: SHA-1 in checkpoint format 1 (_uuid5_str), XXH3-128 in later
//     formats (_xxhash_str).
//
// ns is the chain's namespace and the node joined by "|" (the node alone
// at the root), step the checkpoint's step plus one.

// taskSite is what a checkpoint's task ids are made of.
type taskSite struct {
	checkpoint string
	ns         string
	step       int
	format     int
	// channels are the checkpoint's channels (a pull task's trigger is
	// one of them), nodes the nodes it knows of.
	channels, nodes []string
}

// name finds the node of task id among the pull tasks of every known
// node and the due Sends; "" when none matches.
func (s taskSite) name(id string, due []Task) string {
	node, n := s.which(id, due)
	if n >= 0 {
		return due[nthSend(due, n)].Node
	}
	return node
}

// which finds task id: a pull task of node, or the nth due Send (n >= 0);
// "", -1 when none matches.
func (s taskSite) which(id string, due []Task) (node string, n int) {
	cp, ok := uuidBytes(s.checkpoint)
	if !ok {
		return "", -1
	}
	for _, node := range s.nodes {
		ns := node
		if s.ns != "" {
			ns = s.ns + "|" + node
		}
		step := strconv.Itoa(s.step)
		for _, trigger := range s.channels {
			if s.jsID(cp, ns, step, node, "__pregel_pull", []any{trigger}) == id ||
				s.pyID(cp, ns, step, node, "__pregel_pull", trigger) == id {
				return node, -1
			}
		}
	}
	n = 0
	for _, t := range due {
		if !t.Send {
			continue
		}
		ns := t.Node
		if s.ns != "" {
			ns = s.ns + "|" + t.Node
		}
		step := strconv.Itoa(s.step)
		if s.jsID(cp, ns, step, t.Node, "__pregel_push", strconv.Itoa(n)) == id ||
			s.pyID(cp, ns, step, t.Node, "__pregel_push", strconv.Itoa(n)) == id {
			return "", n
		}
		n++
	}
	return "", -1
}

// update tells the task id of a state update made against the checkpoint:
// uuid5(checkpoint id, "__interrupt__") in Python and JS alike.
func (s taskSite) update(id string) bool {
	cp, ok := uuidBytes(s.checkpoint)
	return ok && uuid5(cp, []byte("__interrupt__")) == id
}

// uuid5 is RFC 4122's name-based UUID (SHA-1) of name in namespace ns.
func uuid5(ns, name []byte) string {
	h := sha1.New()
	h.Write(ns)
	h.Write(name)
	sum := h.Sum(nil)
	sum[6] = sum[6]&0x0f | 0x50 // version 5
	sum[8] = sum[8]&0x3f | 0x80 // RFC 4122 variant
	return uuidText(sum[:16])
}

// jsID is LangGraph.js's uuid5(JSON.stringify(parts), checkpoint id).
func (s taskSite) jsID(cp []byte, parts ...any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // JSON.stringify leaves <, > and & alone
	if err := enc.Encode(parts); err != nil {
		return ""
	}
	return uuid5(cp, bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// pyID is Python's task id: _uuid5_str (SHA-1) for checkpoint format 1,
// _xxhash_str (XXH3-128, big-endian hex) after it; the first 32 hex
// digits as a UUID.
func (s taskSite) pyID(cp []byte, parts ...string) string {
	var b bytes.Buffer
	b.Write(cp)
	for _, p := range parts {
		b.WriteString(p)
	}
	if s.format <= 1 {
		sum := sha1.Sum(b.Bytes())
		return uuidText(sum[:16])
	}
	sum := xxh3.Sum128(b.Bytes())
	return uuidText(sum[:])
}

func uuidText(b []byte) string {
	x := hex.EncodeToString(b)
	return fmt.Sprintf("%s-%s-%s-%s-%s", x[:8], x[8:12], x[12:16], x[16:20], x[20:32])
}

// uuidBytes reads a UUID's 16 bytes.
func uuidBytes(id string) ([]byte, bool) {
	b, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
	return b, err == nil && len(b) == 16
}

// siteOf is the task site of checkpoint row r of chain c: its channels,
// and the nodes its channels, versions seen and metadata name.
func siteOf(c Chain, r row) taskSite {
	s := taskSite{checkpoint: r.id, ns: c.NS, step: r.meta.step + 1, format: r.doc.format}
	for ch := range r.doc.versions {
		s.channels = append(s.channels, ch)
		if n := triggerOf(ch); n != "" && !slices.Contains(s.nodes, n) {
			s.nodes = append(s.nodes, n)
		}
		if !internal(ch) && !slices.Contains(s.nodes, ch) {
			s.nodes = append(s.nodes, ch) // older graphs trigger a node by its name's channel
		}
	}
	if r.doc.entry != "" {
		s.nodes = append(s.nodes, r.doc.entry)
	}
	for n := range r.doc.seen {
		if !slices.Contains(s.nodes, n) {
			s.nodes = append(s.nodes, n)
		}
	}
	slices.Sort(s.channels)
	slices.Sort(s.nodes)
	return s
}
