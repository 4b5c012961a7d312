package tui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"rewind/store/browse"
	"rewind/tui/termtext"
)

// timelineNode is what the timeline keeps of one checkpoint: metadata only, never
// its channel values, so a thread of 10,000 checkpoints stays small.
type timelineNode struct {
	id, parent string
	// label is the id as drawn: a LangGraph UUID's short form
	// (lgShortID), a rewind number as it is.
	label     string
	step      int
	source    string
	writer    string // nodes that wrote it, or "(input)"
	next      string // pending tasks, "executor ×3"
	pending   int
	interrupt string // "before executor"
	at        time.Time
	// turnStart: new input starts a turn here (an input, or a fork with
	// input); reused: the tasks a resume reused here (nav.go).
	turnStart bool
	reused    []string

	// Derived by rebuild.
	kids  []string
	depth int // distance from its root
	row   int // position in the display order
	size  int // rows in its subtree (it and its descendants)
	nest  int // fork nesting level, for drawing rails
	fork  bool
	// turn: turns started on the way from the root, this one's included;
	// turnUnknown while the chain back to the root is not read (a page of
	// a long thread's history, loading).
	turn int
	// forkAt is the nearest ancestor with more than one child (0: none)
	// and forkVia its child on the way here: the branch the node is on,
	// kept so a scrub step does not walk the branch back to find it.
	forkAt, forkVia string
	// resumed: a child finished this checkpoint's superstep in a resume
	// that reused stored writes (a run stopped here, killed or failed).
	resumed bool
}

// nodeFrom keeps a listing's metadata, sanitised once here since it is
// drawn on every scrub.
func nodeFrom(l browse.Listing) *timelineNode {
	n := &timelineNode{id: l.ID, parent: l.Parent, label: lgShortID(l.ID), step: l.Step, source: termtext.Line(l.Source), pending: len(l.Next), at: l.CreatedAt}
	n.writer = termtext.Line(strings.Join(l.WrittenBy, ","))
	if n.writer == "" {
		n.writer = "(" + n.source + ")"
	}
	if l.ReplayOf != "" {
		n.source, n.writer = "replay", "of @"+termtext.Line(l.ReplayOf)
	}
	if len(l.Next) > 0 {
		n.next = termtext.Line(browse.DescribeNext(l.Next))
	}
	if l.Interrupted != "" && len(l.Next) > 0 {
		n.interrupt = termtext.Line(l.Interrupted)
	}
	n.turnStart = isTurnStart(l)
	n.reused = l.Reused
	return n
}

// tree is a thread's checkpoints as a tree (forks branch) plus a cursor.
//
// Display order is a depth-first walk where, at a branch point, the forks
// (newer children) are listed first, indented, and the original line (the
// oldest child) continues at the same indentation afterwards; every subtree
// is then one contiguous run of rows, so "is u an ancestor of v" is an
// interval test on row numbers.
//
// The current branch is the path from the root through the cursor down to
// a leaf, following at each branch point the child last visited (prefer),
// or the newest child if none was.
type tree struct {
	nodes  map[string]*timelineNode
	rows   []string // node ids in display order
	roots  []string
	maxID  string // the newest (idLess)
	cursor string
	prefer map[string]string
	// leafOf caches leaf(): moving along the branch keeps it; changing a
	// preference, jumping or adding nodes drops it.
	leafOf string
}

// turnUnknown is the turn of a checkpoint whose chain to the root is not
// all read: counting from the oldest row read would show a wrong number.
const turnUnknown = -1

func newTree() *tree {
	return &tree{nodes: map[string]*timelineNode{}, prefer: map[string]string{}}
}

func (t *tree) len() int { return len(t.nodes) }

// merge adds or refreshes nodes; it reports whether any node was new.
func (t *tree) merge(ns []*timelineNode) (added []string) {
	for _, n := range ns {
		if old, ok := t.nodes[n.id]; ok {
			// Keep the derived fields; refresh the metadata.
			old.parent, old.step, old.source, old.writer, old.next, old.pending, old.interrupt, old.at =
				n.parent, n.step, n.source, n.writer, n.next, n.pending, n.interrupt, n.at
			old.turnStart, old.reused = n.turnStart, n.reused
			continue
		}
		t.nodes[n.id] = n
		added = append(added, n.id)
		if idLess(t.maxID, n.id) {
			t.maxID = n.id
		}
	}
	if len(added) > 0 {
		t.rebuild()
		sort.Slice(added, func(i, j int) bool { return idLess(added[i], added[j]) })
	}
	return added
}

// linked reports whether n hangs under a loaded parent. A parent that is not
// older is treated as missing, so corrupt data cannot make a cycle.
func (t *tree) linked(n *timelineNode) bool {
	if n.parent == "" || !idLess(n.parent, n.id) {
		return false
	}
	_, ok := t.nodes[n.parent]
	return ok
}

func (t *tree) rebuild() {
	ids := make([]string, 0, len(t.nodes))
	for id, n := range t.nodes {
		ids = append(ids, id)
		n.kids = n.kids[:0]
		n.resumed = false
	}
	sort.Slice(ids, func(i, j int) bool { return idLess(ids[i], ids[j]) })
	t.roots = t.roots[:0]
	for _, id := range ids {
		n := t.nodes[id]
		if t.linked(n) {
			p := t.nodes[n.parent]
			p.kids = append(p.kids, id)
			n.depth = p.depth + 1
			n.turn = p.turn
			p.resumed = p.resumed || len(n.reused) > 0
		} else {
			t.roots = append(t.roots, id)
			n.depth, n.turn = 0, 0
			if n.parent != "" {
				n.turn = turnUnknown // its parent is not read (yet)
			}
		}
		if n.turnStart && n.turn != turnUnknown {
			n.turn++
		}
	}
	for _, id := range ids { // parents first: a linked parent is older
		n := t.nodes[id]
		n.forkAt, n.forkVia = "", ""
		if !t.linked(n) {
			continue
		}
		if p := t.nodes[n.parent]; len(p.kids) > 1 {
			n.forkAt, n.forkVia = p.id, id
		} else {
			n.forkAt, n.forkVia = p.forkAt, p.forkVia
		}
	}
	for i := len(ids) - 1; i >= 0; i-- {
		n := t.nodes[ids[i]]
		n.size = 1
		for _, k := range n.kids {
			n.size += t.nodes[k].size
		}
	}
	type item struct {
		id   string
		nest int
		fork bool
	}
	t.rows = t.rows[:0]
	stack := make([]item, 0, 64)
	for i := len(t.roots) - 1; i >= 0; i-- {
		stack = append(stack, item{id: t.roots[i]})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := t.nodes[it.id]
		n.row, n.nest, n.fork = len(t.rows), it.nest, it.fork
		t.rows = append(t.rows, it.id)
		if len(n.kids) == 0 {
			continue
		}
		stack = append(stack, item{id: n.kids[0], nest: it.nest})
		for i := len(n.kids) - 1; i >= 1; i-- {
			stack = append(stack, item{id: n.kids[i], nest: it.nest + 1, fork: true})
		}
	}
	if _, ok := t.nodes[t.cursor]; !ok {
		t.cursor = ""
	}
	t.leafOf = ""
}

// isAncestor reports whether u is v or one of its ancestors.
func (t *tree) isAncestor(u, v string) bool {
	a, b := t.nodes[u], t.nodes[v]
	if a == nil || b == nil {
		return false
	}
	return a.row <= b.row && b.row < a.row+a.size
}

func (t *tree) parentOf(id string) string {
	n := t.nodes[id]
	if n == nil || !t.linked(n) {
		return ""
	}
	return n.parent
}

// preferred is the child the current branch follows below id.
func (t *tree) preferred(id string) string {
	n := t.nodes[id]
	if n == nil || len(n.kids) == 0 {
		return ""
	}
	if p, ok := t.prefer[id]; ok {
		if c := t.nodes[p]; c != nil && t.linked(c) && c.parent == id {
			return p
		}
	}
	return n.kids[len(n.kids)-1]
}

func (t *tree) setPrefer(parent, child string) {
	if t.prefer[parent] != child {
		t.prefer[parent] = child
		t.leafOf = ""
	}
}

// leaf is the end of the current branch.
func (t *tree) leaf() string {
	if t.leafOf != "" && t.isAncestor(t.cursor, t.leafOf) {
		return t.leafOf
	}
	t.leafOf = t.walkLeaf()
	return t.leafOf
}

func (t *tree) walkLeaf() string {
	id := t.cursor
	for id != "" {
		next := t.preferred(id)
		if next == "" {
			return id
		}
		id = next
	}
	return ""
}

func (t *tree) root() string {
	id := t.cursor
	for {
		p := t.parentOf(id)
		if p == "" {
			return id
		}
		id = p
	}
}

// jump puts the cursor on id and makes the branch pass through it.
func (t *tree) jump(id string) bool {
	if _, ok := t.nodes[id]; !ok {
		return false
	}
	t.cursor = id
	for v := id; ; {
		p := t.parentOf(v)
		if p == "" {
			break
		}
		t.setPrefer(p, v)
		v = p
	}
	return true
}

// step moves one checkpoint along the current branch (dir < 0: towards
// the root).
func (t *tree) step(dir int) bool {
	if dir < 0 {
		if p := t.parentOf(t.cursor); p != "" {
			t.cursor = p
			return true
		}
		return false
	}
	if c := t.preferred(t.cursor); c != "" {
		t.setPrefer(t.cursor, c)
		t.cursor = c
		return true
	}
	return false
}

func (t *tree) first() bool { return t.jump(t.root()) }
func (t *tree) last() bool  { return t.jump(t.leaf()) }

// switchBranch moves to a sibling branch. At a branch point the cursor stays
// and the branch ahead changes; below one, the cursor moves to the same
// distance from the branch point on the sibling branch, so the same step of
// two branches can be compared; above the first branch point of its branch,
// the cursor stays and the branch ahead changes there.
func (t *tree) switchBranch(dir int) bool {
	cur := t.nodes[t.cursor]
	if cur == nil {
		return false
	}
	if len(cur.kids) > 1 {
		t.setPrefer(cur.id, pick(cur.kids, t.preferred(cur.id), dir))
		return true
	}
	child, bp := cur.id, t.parentOf(cur.id)
	for bp != "" && len(t.nodes[bp].kids) < 2 {
		child, bp = bp, t.parentOf(bp)
	}
	if bp == "" {
		for id := t.preferred(cur.id); id != ""; id = t.preferred(id) {
			if n := t.nodes[id]; len(n.kids) > 1 {
				t.setPrefer(id, pick(n.kids, t.preferred(id), dir))
				return true
			}
		}
		return false
	}
	sib := pick(t.nodes[bp].kids, child, dir)
	dist := cur.depth - t.nodes[bp].depth
	target := sib
	for i := 1; i < dist; i++ {
		next := t.preferred(target)
		if next == "" {
			break
		}
		target = next
	}
	return t.jump(target)
}

func pick(ids []string, cur string, dir int) string {
	for i, id := range ids {
		if id == cur {
			return ids[((i+dir)%len(ids)+len(ids))%len(ids)]
		}
	}
	return ids[0]
}

// moveRow moves the cursor by display rows (crossing branches).
func (t *tree) moveRow(delta int) bool {
	cur := t.nodes[t.cursor]
	if cur == nil || len(t.rows) == 0 {
		return false
	}
	r := min(max(cur.row+delta, 0), len(t.rows)-1)
	if r == cur.row {
		return false
	}
	return t.jump(t.rows[r])
}

// position is the cursor's place on its branch, "7/12" as (7, 12).
func (t *tree) position() (int, int) {
	cur := t.nodes[t.cursor]
	if cur == nil {
		return 0, 0
	}
	leaf := t.nodes[t.leaf()]
	return cur.depth + 1, leaf.depth + 1
}

// branchInfo says which of the branches at the nearest branch point the
// cursor is on ("branch 2/3 at @4"), or "" on a line without forks.
func (t *tree) branchInfo() string {
	cur := t.nodes[t.cursor]
	if cur == nil {
		return ""
	}
	child, bp := cur.forkVia, cur.forkAt
	if bp == "" {
		if len(cur.kids) > 1 {
			return fmt.Sprintf("%d branches ahead", len(cur.kids))
		}
		return ""
	}
	kids := t.nodes[bp].kids
	for i, k := range kids {
		if k == child {
			return fmt.Sprintf("branch %d/%d at @%s", i+1, len(kids), t.label(bp))
		}
	}
	return ""
}

// label is checkpoint id as drawn (its node's label once loaded).
func (t *tree) label(id string) string {
	if n := t.nodes[id]; n != nil {
		return n.shown()
	}
	return lgShortID(id)
}

// shown is the node's id as drawn.
func (n *timelineNode) shown() string {
	if n.label != "" {
		return n.label
	}
	return lgShortID(n.id)
}

// idOf is a rewind checkpoint's id as the tree keys it, browse.Source's
// text ("" for 0, no checkpoint).
func idOf(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// num is a rewind checkpoint's number for the engine's calls (0 for "" or
// an id that is none of rewind's).
func num(id string) int64 {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// idLess orders checkpoint ids oldest first: rewind's are numbers in base
// 10 (a shorter one is smaller), LangGraph's time-ordered UUIDs of one
// length; "" is before every id.
func idLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}
