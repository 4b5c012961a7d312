package cli

// The read side: the read commands (threads, log, show, events, diff)
// read a LangGraph database and a rewind store alike through
// browse.Source (a rewind store through its engine, engine.Browse), and
// print each thing (a threads table, a listing line, a checkpoint's head,
// a diff) with one printer. What a rewind store holds beyond the Source
// (tokens, model calls, events, the ticket's state, --json's rows) is read
// from its engine (reader.e); what only a LangGraph database holds
// (subgraph namespaces, --ns, writes instead of events) only shows there.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/engine"
	"rewind/store/browse"
	"rewind/tui/termtext"
)

// addNS adds --ns, the namespace of a subgraph's chain in a LangGraph
// database.
func addNS(c *cobra.Command, ns *string) {
	c.Flags().StringVar(ns, "ns", "", "on a LangGraph database, the chain of subgraph run `NS` (e.g. review:<task id>, as `rewind threads` lists them, a unique prefix, or the browser's review:43a3a66f…ecc4; default the root graph's)")
}

// reader is a store a read command opened, read through browse.Source: a
// LangGraph database, or a rewind store through its engine. e is the
// rewind store's engine and a its app (the ticket's sources), for what
// the Source does not carry; both nil on a LangGraph database.
type reader struct {
	src browse.Source
	e   *engine.Engine
	a   *app.App
}

// rewindReader reads a rewind store's engine through browse.Source.
func rewindReader(e *engine.Engine) reader {
	return reader{src: e.Browse(browse.About{ReadOnly: true}), e: e}
}

// langGraph is whether the store is a LangGraph database.
func (r reader) langGraph() bool { return r.e == nil }

// withRead opens the store read-only (a LangGraph database, or a rewind
// store with openReader) and runs fn on it. A rewind store has one chain
// per thread: --ns is refused on it.
func withRead(ctx context.Context, storeFlag, ns string, fn func(reader) error) error {
	spec := app.ResolveStore(storeFlag)
	ctx, release, err := spec.Detected(ctx)
	if err != nil {
		return err
	}
	defer release()
	src, err := spec.OpenLangGraph(ctx)
	if err != nil {
		return err
	}
	if src != nil {
		defer src.Close()
		return fn(reader{src: src})
	}
	if err := rewindNS(ns); err != nil {
		return err
	}
	a, err := openReader(ctx, storeFlag)
	if err != nil {
		return err
	}
	defer a.Close()
	r := rewindReader(a.Engine)
	r.a = a
	return fn(r)
}

// withSource runs lg on the store when it is a LangGraph database, and
// rw otherwise, for a command whose printers differ by kind (events: a
// rewind store's event log, LangGraph's writes). A rewind store has one
// chain per thread: --ns is refused on it.
func withSource(ctx context.Context, storeFlag, ns string, lg func(browse.Source) error, rw func(context.Context) error) error {
	spec := app.ResolveStore(storeFlag)
	ctx, release, err := spec.Detected(ctx)
	if err != nil {
		return err
	}
	defer release()
	src, err := spec.OpenLangGraph(ctx)
	if err != nil {
		return err
	}
	if src == nil {
		if err := rewindNS(ns); err != nil {
			return err
		}
		return rw(ctx) // its opener reads the detection in ctx
	}
	defer src.Close()
	return lg(src)
}

// rewindNS refuses --ns on a rewind store, whose threads have one chain.
func rewindNS(ns string) error {
	if ns != "" {
		return usagef("--ns %s names a subgraph's chain of a LangGraph database; a rewind thread has one chain: leave --ns out", named(ns))
	}
	return nil
}

// chain is thread's chain ns as the user named it: on LangGraph through
// chainOf (a prefix, a short form); a rewind thread is named whole.
func (r reader) chain(ctx context.Context, thread, ns string) (readChain, error) {
	if r.langGraph() {
		return chainOf(ctx, r.src, thread, ns)
	}
	return readChain{Chain: browse.Chain{Thread: thread}, rewind: true}, nil
}

// checkpoint is the checkpoint of c that given names ("" the newest): on
// LangGraph readChain.checkpoint; on a rewind store a number (@N too).
func (r reader) checkpoint(ctx context.Context, c readChain, given string) (string, error) {
	if r.langGraph() {
		return c.checkpoint(ctx, r.src, given)
	}
	if given == "" {
		return "", nil
	}
	n, err := checkpointArg(given)
	return strconv.FormatInt(n, 10), err
}

// idJSON is a checkpoint id as --json gives it: a number on a rewind
// store, as its rows have it; LangGraph's UUID as text.
func (r reader) idJSON(id string) any {
	if n, err := strconv.ParseInt(id, 10, 64); err == nil && !r.langGraph() {
		return n
	}
	return id
}

// stateUnread is the status of a thread whose status does not read (its
// Error says why).
const stateUnread = "unread"

// statusNote is the line under the table for a thread that failed or
// asked: the error or the interrupt's value, and where to read it whole.
func statusNote(c readChain, st browse.Status) string {
	var what string
	switch {
	case st.State == stateUnread:
		return fmt.Sprintf("%s: its status does not read: %s (rewind log %s shows its checkpoints)", c.thread(), cutText(firstLine(st.Error), 200), c.thread())
	case st.State == browse.StateError:
		what = cutText(firstLine(st.Error), 200)
		if st.Errors > 1 {
			what += fmt.Sprintf(" (%d tasks failed)", st.Errors)
		}
	case len(st.Interrupts) > 0:
		what = "asks " + oneLine(st.Interrupts[0].Value, 200)
	default:
		return ""
	}
	see := "rewind events " + c.thread() + " " + idOrDash(st.Checkpoint)
	if st.NS != "" {
		see += "; its subgraph: rewind log " + c.thread() + " --ns " + c.nsText(st.NS)
	}
	return fmt.Sprintf("%s: %s: %s (%s)", c.thread(), termtext.Name(st.Where), what, see)
}

// idOrDash is a checkpoint id as text output prints it (pasteText: whole,
// for LangGraph's UUIDs), or - for none.
func idOrDash(id string) string {
	if id == "" {
		return "-"
	}
	if digits(id) { // a rewind checkpoint's number prints as it is
		return id
	}
	return pasteText(id, nil)
}

// digits: s is a short run of ASCII digits, which idText prints bare.
func digits(s string) bool {
	if s == "" || len(s) > 19 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// readChain is a chain as the user named it (on LangGraph resolved:
// browse.Match), with what prints its ids so they can be pasted back.
type readChain struct {
	browse.Chain
	// nss are the thread's namespaces; threads every thread's id when
	// they were listed (LangGraph's only: pasteText needs them for an id
	// past 64 bytes alone).
	nss     []browse.Namespace
	threads []string
	// rewind: a rewind store's thread, printed as its errors name it
	// (idText).
	rewind bool
}

// chainOf is thread's chain ns, or an error naming the fix. The thread is
// its id, a unique prefix of it, or a short form a listing printed (with
// …); the namespace its name or a unique prefix of it.
func chainOf(ctx context.Context, src browse.Source, thread, ns string) (readChain, error) {
	c := readChain{Chain: browse.Chain{Thread: thread, NS: ns}}
	t, found, err := findThread(ctx, src, thread)
	if err != nil {
		return c, err
	}
	if !found {
		if t, err = listedThread(ctx, src, thread, &c); err != nil {
			return c, err
		}
	}
	c.Thread, c.nss = t.ID, t.Namespaces
	if ns == "" {
		return c, nil
	}
	var names []string
	for _, n := range c.nss {
		if n.NS != "" {
			names = append(names, n.NS)
		}
	}
	if c.NS, err = browse.One("namespace", ns, browse.Match(ns, names), browse.Chain{Thread: c.Thread}.String(), "rewind threads"); err != nil {
		return c, err
	}
	return c, nil
}

// findThread reads the thread given whole alone (browse.ThreadFinder),
// listing none: found is false when the source cannot, or no thread is
// that id (it may be a prefix). An id past 64 bytes is listed: pasteText
// cuts it after a prefix no other thread starts with, so it needs them.
func findThread(ctx context.Context, src browse.Source, thread string) (browse.Thread, bool, error) {
	f, ok := src.(browse.ThreadFinder)
	if !ok || len(thread) > 64 {
		return browse.Thread{}, false, nil
	}
	return f.Thread(ctx, thread)
}

// listedThread finds the thread given (its id, a unique prefix, a short
// form) among every thread listed, keeping their ids in c.threads.
func listedThread(ctx context.Context, src browse.Source, thread string, c *readChain) (browse.Thread, error) {
	ts, err := src.Threads(ctx)
	if err != nil {
		return browse.Thread{}, err
	}
	for _, t := range ts {
		c.threads = append(c.threads, t.ID)
	}
	id := thread
	if thread != "" && !slices.Contains(c.threads, thread) {
		if id, err = browse.One("thread", thread, browse.Match(thread, c.threads), "this LangGraph database", "rewind threads"); err != nil {
			return browse.Thread{}, err
		}
	}
	i := slices.Index(c.threads, id)
	if i < 0 {
		return browse.Thread{}, fmt.Errorf("thread %s %w in this LangGraph database: list its threads with `rewind threads`", named(thread), browse.ErrNotFound)
	}
	return ts[i], nil
}

// thread is the chain's thread as text output prints it (pasteText; a
// rewind thread as idText).
func (c readChain) thread() string {
	if c.rewind {
		return idText(c.Thread)
	}
	return pasteText(c.Thread, c.threads)
}

// nsText is namespace ns of the chain's thread as text output prints it.
func (c readChain) nsText(ns string) string {
	names := make([]string, 0, len(c.nss))
	for _, n := range c.nss {
		names = append(names, n.NS)
	}
	return pasteText(ns, names)
}

// where is the chain as a command names it: T, or T --ns NS.
func (c readChain) where() string {
	if c.NS == "" {
		return c.thread()
	}
	return c.thread() + " --ns " + c.nsText(c.NS)
}

// checkpoint is the one checkpoint of the chain that given names (an id,
// a unique prefix, or a form the browser shows: browse.Match; "" the
// newest).
func (c readChain) checkpoint(ctx context.Context, src browse.Source, given string) (string, error) {
	return browse.Resolve(ctx, src, c.Chain, strings.TrimPrefix(given, "@"), "rewind log "+c.where())
}

// pasteText is an id or a namespace of a LangGraph database as text
// output prints it, so that what is printed can be given back: whole up
// to 64 bytes (quoted as idText quotes), else cut with … after its
// shortest prefix of 64 bytes or more that none of others starts with (a
// prefix the commands take, browse.Match). --json has every value whole.
func pasteText(s string, others []string) string {
	const keep = 64
	if len(s) <= keep {
		return idText(s)
	}
	n := keep
	for _, o := range others {
		if o == s {
			continue
		}
		i := 0
		for i < len(s) && i < len(o) && s[i] == o[i] {
			i++
		}
		n = max(n, i+1)
	}
	for n < len(s) && !utf8.RuneStart(s[n]) { // not half a character
		n++
	}
	if n >= len(s) {
		return wholeText(s)
	}
	return wholeText(s[:n]) + browse.Ellipsis
}

// wholeText is s whole, bare when it is a plain word (as store.Name's
// word: safe to paste into a shell), else quoted with its controls
// escaped.
func wholeText(s string) string {
	plain := s != ""
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_.:/@+=,", r) {
			plain = false
			break
		}
	}
	if plain {
		return termtext.Line(s)
	}
	return termtext.Line(strconv.Quote(s))
}

// oneLine is a value as compact JSON on one line, cut past n bytes.
func oneLine(v any, n int) string {
	b, err := json.Marshal(v)
	s := string(b)
	if err != nil {
		s = fmt.Sprint(v)
	}
	return cutText(s, n)
}

// cutText is s on one line, cut past n bytes.
func cutText(s string, n int) string {
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = fmt.Sprintf("%s…(%d bytes)", s[:cut], len(s))
	}
	return termtext.Line(s)
}

// lgShow is `rewind show` on a LangGraph database: the checkpoint, its
// conversation (tool calls joined to their results), every channel, the
// tasks due with the Sends' arguments, and the writes stored for the
// superstep from it.
func lgShow(ctx context.Context, src browse.Source, thread, ns, id string, asJSON bool, out io.Writer) error {
	c, err := chainOf(ctx, src, thread, ns)
	if err != nil {
		return err
	}
	if id, err = c.checkpoint(ctx, src, id); err != nil {
		return err
	}
	cp, err := src.Checkpoint(ctx, c.Chain, id)
	if err != nil {
		return err
	}
	ws, err := src.Writes(ctx, c.Chain, cp.ID)
	if err != nil {
		return err
	}
	msgs := cp.Messages()
	if asJSON {
		if ws == nil {
			ws = []browse.TaskWrites{}
		}
		if msgs == nil {
			msgs = []browse.Message{}
		}
		return writeJSON(out, map[string]any{"checkpoint": cp, "messages": msgs, "writes": ws})
	}
	fmt.Fprint(out, checkpointHead(c, cp.Listing, fmt.Sprintf("format v%d", cp.Format)))
	fmt.Fprintf(out, "%s\n", src.About().Status())
	if cp.Damaged != "" {
		fmt.Fprintf(out, "damaged: %s\n", termtext.Line(cp.Damaged))
	}
	if len(msgs) > 0 {
		fmt.Fprintf(out, "\nMESSAGES (%d)\n", len(msgs))
		for _, m := range msgs {
			printLGMessage(out, m, msgs)
		}
	}
	fmt.Fprintln(out, "\nSTATE")
	for _, ch := range cp.Channels {
		if ch.Internal || ch.Name == "messages" && msgs != nil {
			continue
		}
		fmt.Fprintf(out, "  %s = %s\n", termtext.Line(ch.Name), oneLine(ch.Value, 400))
	}
	if cp.FromFirstWrite {
		// Beside STATE: what LangGraph may show that no row holds.
		fmt.Fprintf(out, "\nNOT STORED\n  %s\n", termtext.Line(browse.DescribeAbsent(cp.Absent)))
	}
	fmt.Fprintln(out, "\nNEXT")
	if len(cp.Next) == 0 {
		fmt.Fprintln(out, "  — (nothing due)")
	}
	for _, t := range cp.Next {
		if t.Send {
			fmt.Fprintf(out, "  %s (Send) %s\n", termtext.Name(t.Node), oneLine(t.Arg, 200))
		} else {
			fmt.Fprintf(out, "  %s\n", termtext.Name(t.Node))
		}
	}
	if st := cp.Stored; st != nil {
		printStored(out, st)
	}
	if len(ws) > 0 {
		fmt.Fprintln(out, "\nWRITES (the superstep from here, by task)")
		printTaskWrites(out, "  ", ws)
	}
	return nil
}

// checkpointHead is the first line of `rewind show` on either store: the
// chain, the checkpoint, where it stands, and its format (a rewind
// store's schema, LangGraph's checkpoint format "v").
func checkpointHead(c readChain, l browse.Listing, format string) string {
	parent := "none"
	switch {
	case l.Parent != "":
		parent = "@" + idOrDash(l.Parent)
	case l.RerootedFrom != "":
		parent = "pruned (was @" + idOrDash(l.RerootedFrom) + ")"
	}
	return fmt.Sprintf("thread %s · checkpoint @%s (parent %s, step %d, source %s, %s)\n", c.where(), idOrDash(l.ID), parent, l.Step, termtext.Line(l.Source), format)
}

// printStored says what the database holds where STATE and NEXT show
// LangGraph's get_state: pending writes applied (the WRITES below),
// DeltaChannels rebuilt; worded in browse (Stored.Head, DescribeStored),
// as the browser words it.
func printStored(out io.Writer, st *browse.Stored) {
	fmt.Fprintf(out, "\nSTORED (%s)\n", st.Head())
	for _, ch := range st.Channels {
		name := termtext.Line(ch.Name)
		if ch.Held {
			say := ""
			if ch.Delta {
				say = browse.DescribeStored(ch, idOrDash) + ": "
			}
			fmt.Fprintf(out, "  %s = %s%s\n", name, say, oneLine(ch.Value, 400))
			continue
		}
		fmt.Fprintf(out, "  %s: %s\n", name, termtext.Line(browse.DescribeStored(ch, idOrDash)))
	}
	if st.Next != nil {
		names := make([]string, len(st.Next))
		for i, t := range st.Next {
			names[i] = termtext.Name(t.Node)
		}
		fmt.Fprintf(out, "  next: %s\n", strings.Join(names, ", "))
	}
}

// printLGMessage prints one message; an AI message's tool calls point to
// the messages that answer them, a tool message to the call it answers.
func printLGMessage(out io.Writer, m browse.Message, all []browse.Message) {
	fmt.Fprintf(out, "  #%d %s", m.Index+1, termtext.Line(m.Role))
	if m.Name != "" {
		fmt.Fprintf(out, " (%s)", termtext.Line(m.Name))
	}
	if m.ToolCallID != "" {
		fmt.Fprintf(out, " ← call %s", idText(m.ToolCallID))
		if m.CallIndex >= 0 {
			fmt.Fprintf(out, " of #%d", m.CallIndex+1)
		}
	}
	fmt.Fprintln(out, ":")
	if m.Content != "" || len(m.ToolCalls) == 0 {
		for _, line := range strings.Split(m.Content, "\n") {
			fmt.Fprintf(out, "      %s\n", termtext.Line(line))
		}
	}
	for _, tc := range m.ToolCalls {
		answer := "no result yet"
		if tc.Result >= 0 && tc.Result < len(all) {
			answer = fmt.Sprintf("→ #%d", tc.Result+1)
		}
		fmt.Fprintf(out, "      tool call %s %s(%s) %s\n", idText(tc.ID), termtext.Line(tc.Name), oneLine(tc.Args, 200), answer)
	}
}

// printTaskWrites prints writes grouped by task, LangGraph's special ones
// named, with the error text and the interrupt values.
func printTaskWrites(out io.Writer, indent string, ws []browse.TaskWrites) {
	for _, tw := range ws {
		fmt.Fprintf(out, "%stask %s %s: %d write(s)\n", indent, idText(tw.Task), termtext.Name(tw.Who()), len(tw.Writes))
		for _, w := range tw.Writes {
			kind := ""
			if w.Kind != "" {
				kind = " [" + termtext.Line(w.Kind) + "]"
			}
			fmt.Fprintf(out, "%s  %3d %s%s = %s\n", indent, w.Idx, termtext.Line(w.Channel), kind, oneLine(w.Value, 300))
		}
		if tw.Error != "" {
			fmt.Fprintf(out, "%s  error: %s\n", indent, termtext.Line(tw.Error))
		}
		for _, in := range tw.Interrupts {
			fmt.Fprintf(out, "%s  interrupt %s: %s\n", indent, idText(in.ID), oneLine(in.Value, 300))
		}
	}
}

// lgMessage is `show --message N` on a LangGraph database: message #N
// (1-based) of the checkpoint's messages channel, whole.
func lgMessage(ctx context.Context, src browse.Source, thread, ns, id string, n int64, asJSON bool, out io.Writer) error {
	c, err := chainOf(ctx, src, thread, ns)
	if err != nil {
		return err
	}
	if id, err = c.checkpoint(ctx, src, id); err != nil {
		return err
	}
	cp, err := src.Checkpoint(ctx, c.Chain, id)
	if err != nil {
		return err
	}
	msgs := cp.Messages()
	if n < 1 || n > int64(len(msgs)) {
		return fmt.Errorf("message #%d of thread %s %w: checkpoint %s holds %d message(s): give --message 1 to %d", n, named(thread), browse.ErrNotFound, named(cp.ID), len(msgs), len(msgs))
	}
	m := msgs[n-1]
	if asJSON {
		return writeJSON(out, m)
	}
	printLGMessage(out, m, msgs)
	return nil
}

// lgEvents is `rewind events` on a LangGraph database: LangGraph keeps no
// event log; its writes (with errors and interrupts) are the record, by
// the checkpoint whose superstep stored them.
func lgEvents(ctx context.Context, src browse.Source, thread, ns, id string, asJSON bool, out io.Writer) error {
	c, err := chainOf(ctx, src, thread, ns)
	if err != nil {
		return err
	}
	var ids []string
	if id != "" {
		if id, err = c.checkpoint(ctx, src, id); err != nil {
			return err
		}
		cp, err := src.Checkpoint(ctx, c.Chain, id)
		if err != nil {
			return err
		}
		ids = []string{cp.ID}
	} else {
		h, err := src.History(ctx, c.Chain, "", 0)
		if err != nil {
			return err
		}
		slices.Reverse(h)
		for _, l := range h {
			if l.Counts.Writes > 0 {
				ids = append(ids, l.ID)
			}
		}
	}
	type group struct {
		Checkpoint string              `json:"checkpoint"`
		Tasks      []browse.TaskWrites `json:"tasks"`
	}
	groups := []group{}
	for _, cid := range ids {
		ws, err := src.Writes(ctx, c.Chain, cid)
		if err != nil {
			return err
		}
		if len(ws) > 0 || id != "" {
			if ws == nil {
				ws = []browse.TaskWrites{}
			}
			groups = append(groups, group{cid, ws})
		}
	}
	if asJSON {
		return writeJSON(out, groups)
	}
	for _, g := range groups {
		fmt.Fprintf(out, "@%s\n", idOrDash(g.Checkpoint))
		printTaskWrites(out, "  ", g.Tasks)
	}
	return nil
}

// runDiff is `rewind diff` on either store: how the graph's channels
// changed from A to B (engine.Diff, messages matched by id), and how the
// two stand (a rewind store's engine walks their ancestors; LangGraph's
// chain is walked over its listings).
func runDiff(ctx context.Context, r reader, thread, ns, a, b string, asJSON bool, out io.Writer) error {
	c, err := r.chain(ctx, thread, ns)
	if err != nil {
		return err
	}
	if a, err = r.checkpoint(ctx, c, a); err != nil {
		return err
	}
	if b, err = r.checkpoint(ctx, c, b); err != nil {
		return err
	}
	from, err := r.src.Checkpoint(ctx, c.Chain, a)
	if err != nil {
		return err
	}
	to, err := r.src.Checkpoint(ctx, c.Chain, b)
	if err != nil {
		return err
	}
	rel, err := r.relation(ctx, c, a, b)
	if err != nil {
		return err
	}
	diffs := engine.Diff(engine.Values(from.State()), engine.Values(to.State()))
	if asJSON {
		if diffs == nil {
			diffs = []engine.ChannelDiff{}
		}
		doc := map[string]any{"thread": c.Thread, "from": r.idJSON(a), "to": r.idJSON(b), "relation": rel, "channels": diffs}
		if r.langGraph() {
			doc["ns"] = c.NS
		}
		return writeJSON(out, doc)
	}
	fmt.Fprintf(out, "@%s → @%s of thread %s (%s): %d channel(s) changed\n", idOrDash(a), idOrDash(b), c.where(), termtext.Line(rel), len(diffs))
	for _, d := range diffs {
		fmt.Fprintf(out, "@@ %s: %s\n", termtext.Line(d.Channel), termtext.Line(d.Summary))
		for _, l := range d.Lines {
			fmt.Fprintf(out, "  %s\n", termtext.Line(l))
		}
		if d.More > 0 {
			fmt.Fprintf(out, "  … %d more line(s)\n", d.More)
		}
	}
	return nil
}

// relation says how checkpoints a and b of c stand (browse.Relation).
func (r reader) relation(ctx context.Context, c readChain, a, b string) (string, error) {
	if !r.langGraph() {
		x, _ := strconv.ParseInt(a, 10, 64)
		y, _ := strconv.ParseInt(b, 10, 64)
		return r.e.Relation(ctx, c.Thread, x, y)
	}
	h, err := r.src.History(ctx, c.Chain, "", 0)
	if err != nil {
		return "", err
	}
	return browse.Relation(h, a, b), nil
}
