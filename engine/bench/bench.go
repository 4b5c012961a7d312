// Package bench measures a long conversation: it runs the ticket graph for
// many turns on one new thread with the mock model at zero latency and
// reports, turn by turn, the time a turn took and how much the store grew,
// then how long listing the thread and loading a checkpoint take. It is
// what `rewind bench` prints, and the numbers the long-conversation targets
// are checked against.
package bench

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/seal"
	"rewind/engine/ticket"
	"rewind/store"
)

// Sentences are the ten sentences of a support conversation; turn n sends
// sentence n mod 10 with its own order number.
var Sentences = []string{
	"My order SO%d hasn't arrived: what is the order status, where is the parcel, and can I get a refund?",
	"Where is the parcel for SO%d right now?",
	"Can you send me the invoice for SO%d with the VAT on it?",
	"Please change the delivery address of SO%d to my office.",
	"Is SO%d still eligible for a refund, and how long does it take?",
	"I want to cancel SO%d: is there a fee?",
	"Does the warranty cover the damaged item in SO%d?",
	"What is the status of SO%d: was it packed yet?",
	"The tracking for SO%d has not moved in three days, what is going on?",
	"Refund SO%d to my original payment method please, and confirm the window.",
}

// turnInput is turn n's message: sentence n mod 10 with its own order
// number.
func turnInput(n int) []engine.Write {
	return ticket.Input(fmt.Sprintf(Sentences[(n-1)%len(Sentences)], 20260000+n))
}

// Options say what to run.
type Options struct {
	Turns int
	// InlineBytes puts a value of this many bytes inline in state on the
	// first turn (an attachment whose reference carries its content), to
	// see that it is stored once.
	InlineBytes int
	// Thread names the new thread; empty picks one.
	Thread string
	// Reads is how many times the listing and each load are timed (the
	// median is reported); default 15.
	Reads int
	// Keys seal the ticket graph's sensitive channels (nil: stored in
	// the clear).
	Keys *seal.Keys
	// TurnsOnly runs the turns and times no reads after them.
	TurnsOnly bool
	// Floor, when set, is given each turn's rows after the turn (timed
	// apart): a turn's cost against a bare program's for the same rows.
	Floor Floor
}

// Turn is one turn's figures.
type Turn struct {
	Turn int     `json:"turn"`
	Ms   float64 `json:"ms"`
	// CPUMs is the process's CPU time during the turn (user and system,
	// every goroutine: the SQLite checkpointer and the GC too, not a
	// PostgreSQL server's): on a shared machine it varies less than Ms.
	CPUMs float64 `json:"cpuMs"`
	// WrittenBytes is what the process wrote during the turn (to files:
	// SQLite's WAL and database; to sockets: PostgreSQL's protocol), 0
	// where /proc/self/io is not there.
	WrittenBytes int64 `json:"writtenBytes"`
	Checkpoints  int   `json:"checkpoints"`
	// Bytes is what the store grew by (store.Store.Size of the thread).
	Bytes      int64 `json:"bytes"`
	ModelCalls int   `json:"modelCalls"`
	// PromptTokens is what the turn's requests carried, all calls; Largest
	// the largest one request (the mock counts 4 bytes a token): with the
	// conversation in every request, these stay flat once history is
	// compacted, and Largest under the context window.
	PromptTokens int `json:"promptTokens"`
	Largest      int `json:"largestRequest"`
	// FloorMs and FloorCPUMs are the floor's time and CPU time for the
	// turn's rows (Options.Floor; 0 without one).
	FloorMs    float64 `json:"floorMs,omitempty"`
	FloorCPUMs float64 `json:"floorCpuMs,omitempty"`
}

// Report is the whole run.
type Report struct {
	Store string `json:"store"`
	// Durability says how the store's commits reach the disk (the
	// caller's: SQLite's sync mode).
	Durability  string  `json:"durability,omitempty"`
	Thread      string  `json:"thread"`
	Turns       []Turn  `json:"turns"`
	Checkpoints int64   `json:"checkpoints"`
	TotalBytes  int64   `json:"totalBytes"`
	HistoryMs   float64 `json:"historyMs"`
	// GetLatestMs and GetMiddleMs load one checkpoint's values in a new
	// engine of the process that wrote the thread (nothing cached, but a
	// warm process); GetLatestWarmMs again in the engine that wrote it.
	// NewProcess, when the caller measured it, is the same loads in a new
	// process each.
	GetLatestMs     float64 `json:"getLatestMs"`
	GetMiddleMs     float64 `json:"getMiddleMs"`
	GetLatestWarmMs float64 `json:"getLatestWarmMs"`
	// Slope compares a turn early in the thread with the last ones.
	Slope Slope `json:"slope"`
	// Floor compares the turns with the floor's cost of their rows
	// (Options.Floor; nil without one).
	Floor      *FloorReport `json:"floor,omitempty"`
	NewProcess *NewProcess  `json:"newProcess,omitempty"`
	// Commands, when the caller measured them, are whole rewind commands
	// on the thread, each a new process: a bare start first, to read the
	// others against.
	Commands []Command `json:"commands,omitempty"`
	// RSSBytes is the process's peak resident memory.
	RSSBytes    int64 `json:"rssBytes"`
	InlineBytes int   `json:"inlineBytes,omitempty"`
	// Window is the mock's context window in tokens, which every request
	// must stay under.
	Window int `json:"window"`
}

// Run runs the conversation on st. progress, when set, sees each turn as it
// ends.
func Run(ctx context.Context, st store.Store, storeName string, o Options, progress func(Turn)) (Report, error) {
	if o.Turns < 1 {
		return Report{}, fmt.Errorf("bench: %d turns: give at least one turn (Options.Turns)", o.Turns)
	}
	if o.Reads < 1 {
		o.Reads = 15
	}
	if o.Thread == "" {
		// Short, like a real thread id: every row of every table holds it.
		o.Thread = fmt.Sprintf("bench-%04x", time.Now().UnixNano()&0xffff)
	}
	if _, err := st.Latest(ctx, o.Thread); err == nil {
		return Report{}, fmt.Errorf("bench: thread %q exists; the bench needs a new thread", o.Thread)
	} else if !errors.Is(err, store.ErrNotFound) {
		return Report{}, fmt.Errorf("bench: %w", err)
	}
	mock := ticket.NewMock()
	sizes := &largest{inner: mock}
	var rec *recorder
	if o.Floor != nil {
		rec = &recorder{}
	}
	e, err := ticket.NewEngine(st, sizes, ticket.WithKeys(o.Keys), ticket.WithStored(rec.stored()))
	if err != nil {
		return Report{}, err
	}
	rep := Report{Store: storeName, Thread: o.Thread, InlineBytes: o.InlineBytes, Window: mock.ContextWindow("")}
	size, err := st.Size(ctx, o.Thread)
	if err != nil {
		return Report{}, fmt.Errorf("bench: %w", err)
	}
	last, size, err := runTurns(ctx, e, st, o, &rep, size, sizes, rec, progress)
	if err != nil {
		return rep, err
	}
	rep.Checkpoints, rep.TotalBytes = last, size
	rep.Slope = rep.slope()
	if rec != nil {
		rep.Floor = rep.floor()
	}
	if o.TurnsOnly {
		return rep, nil
	}
	// Reads are timed in a settled store: a server still flushing the
	// turns just written (PostgreSQL's checkpointer) is not what a
	// reader of an existing thread meets.
	time.Sleep(time.Second)
	if rep.HistoryMs, err = median(o.Reads, func() (time.Duration, error) {
		start := time.Now()
		cps, err := e.History(ctx, o.Thread, 0, 0)
		took := time.Since(start)
		if err == nil && int64(len(cps)) != last {
			err = fmt.Errorf("listed %d checkpoints of %d", len(cps), last)
		}
		return took, err
	}); err != nil {
		return rep, fmt.Errorf("bench: list the thread: %w", err)
	}
	for _, at := range []struct {
		id   int64
		dst  *float64
		warm bool
	}{{last, &rep.GetLatestMs, false}, {max(last/2, 1), &rep.GetMiddleMs, false}, {last, &rep.GetLatestWarmMs, true}} {
		if *at.dst, err = median(o.Reads, func() (time.Duration, error) {
			reader := e
			if !at.warm {
				// A new engine has nothing cached: the load reads and
				// rebuilds the checkpoint's chain, as a new process would.
				// Building it (declaring the graph, about 13 µs) is a
				// process's once, not the load's, and is not timed.
				if reader, err = ticket.NewEngine(st, mock, ticket.WithKeys(o.Keys)); err != nil {
					return 0, err
				}
			}
			start := time.Now()
			_, err := reader.Get(ctx, o.Thread, at.id)
			return time.Since(start), err
		}); err != nil {
			return rep, fmt.Errorf("bench: load checkpoint %d: %w", at.id, err)
		}
	}
	rep.RSSBytes = PeakRSS()
	return rep, nil
}

// runTurns runs the turns, adding each one's figures to rep; it returns
// the newest checkpoint and the thread's size.
func runTurns(ctx context.Context, e *engine.Engine, st store.Store, o Options, rep *Report, size int64, sizes *largest, rec *recorder, progress func(Turn)) (last, _ int64, _ error) {
	for n := 1; n <= o.Turns; n++ {
		input := turnInput(n)
		if n == 1 && o.InlineBytes > 0 {
			input = append(input, engine.Put("attachments", []ticket.Attachment{InlineAttachment(o.InlineBytes)}))
		}
		wrote, cpu, start := written(), cpuTime(), time.Now()
		res, err := e.Run(ctx, o.Thread, input, engine.RunConfig{})
		took, cpu, wrote := time.Since(start), cpuTime()-cpu, written()-wrote
		if err != nil {
			return 0, 0, fmt.Errorf("bench: turn %d: %w", n, err)
		}
		now, err := st.Size(ctx, o.Thread)
		if err != nil {
			return 0, 0, fmt.Errorf("bench: %w", err)
		}
		t := Turn{Turn: n, Ms: ms(took), CPUMs: ms(time.Duration(cpu)), WrittenBytes: wrote, Checkpoints: int(res.Checkpoint - last), Bytes: now - size, ModelCalls: model.Counts(res.ModelCalls).Sum(),
			PromptTokens: res.Usage.PromptTokens, Largest: sizes.take()}
		if rec != nil {
			took, cpu, err := rec.replay(ctx, o.Floor)
			if err != nil {
				return 0, 0, err
			}
			t.FloorMs, t.FloorCPUMs = ms(took), ms(time.Duration(cpu))
		}
		last, size = res.Checkpoint, now
		rep.Turns = append(rep.Turns, t)
		if progress != nil {
			progress(t)
		}
	}
	return last, size, nil
}

// NewProcess is what loading a checkpoint costs a new process (`rewind
// bench` starts one a load), after the store is open: medians.
type NewProcess struct {
	Processes int `json:"processes"`
	// OpenMs opens the store and makes the engine.
	OpenMs float64 `json:"openMs"`
	// LatestMs and MiddleMs are the process's first load: the newest
	// checkpoint, the one in the middle.
	LatestMs float64 `json:"latestMs"`
	MiddleMs float64 `json:"middleMs"`
	// ThenMs is the same process's next load, of another old checkpoint:
	// what a load costs once the process's first-use costs are paid.
	ThenMs float64 `json:"thenMs"`
	// LatestCPUMs, MiddleCPUMs and ThenCPUMs are the same loads' CPU
	// time in the process (0 where it is not measured): on a shared
	// machine it varies less than the clock's, and it leaves out the
	// time a server (PostgreSQL) took.
	LatestCPUMs float64 `json:"latestCpuMs"`
	MiddleCPUMs float64 `json:"middleCpuMs"`
	ThenCPUMs   float64 `json:"thenCpuMs"`
}

// Command is what a rewind command cost a new process, from its start to
// its exit: medians of Runs.
type Command struct {
	// Name says what it is ("show the newest"), Args how it was run.
	Name string   `json:"name"`
	Args []string `json:"args"`
	Runs int      `json:"runs"`
	Ms   float64  `json:"ms"`
	// CPUMs is the process's user and system time; RSSBytes its peak
	// resident memory (the binary's and the database's mapped pages
	// included).
	CPUMs    float64 `json:"cpuMs"`
	RSSBytes int64   `json:"rssBytes"`
}

// Loads are one new process's timings (Load): opening the store and the
// engine, then each load in order.
type Loads struct {
	OpenMs float64   `json:"openMs"`
	Ms     []float64 `json:"ms"`
	// CPUMs is each load's CPU time in the process (user and system).
	CPUMs []float64 `json:"cpuMs"`
}

// Load loads checkpoints ids of thread in order on a new engine of open's
// store, timing each: what a new process's loads cost (`rewind bench`
// runs it in one). With profile, the loads' CPU profile goes to that file
// ($REWIND_BENCH_CPUPROFILE: where the first-use costs are).
func Load(ctx context.Context, open func(context.Context) (store.Store, error), keys *seal.Keys, thread string, ids []int64, profile string) (Loads, error) {
	start := time.Now()
	st, err := open(ctx)
	if err != nil {
		return Loads{}, err
	}
	defer st.Close()
	e, err := ticket.NewEngine(st, ticket.NewMock(), ticket.WithKeys(keys))
	if err != nil {
		return Loads{}, err
	}
	out := Loads{OpenMs: ms(time.Since(start))}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return out, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return out, err
		}
		defer pprof.StopCPUProfile()
	}
	for _, id := range ids {
		start, cpu := time.Now(), cpuTime()
		if _, err := e.Get(ctx, thread, id); err != nil {
			return out, fmt.Errorf("bench: load checkpoint %d: %w", id, err)
		}
		out.Ms = append(out.Ms, ms(time.Since(start)))
		out.CPUMs = append(out.CPUMs, ms(time.Duration(cpuTime()-cpu)))
	}
	return out, nil
}

// Median is the median of xs (0 for none).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// InlineAttachment is an attachment whose reference carries n bytes of
// content inline (a data: URL), the way a careless client stores an image.
func InlineAttachment(n int) ticket.Attachment {
	raw := make([]byte, n*3/4)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	return ticket.Attachment{ID: "att-inline", Kind: "image", Ref: "data:image/png;base64," + base64.StdEncoding.EncodeToString(raw), Caption: "pasted inline"}
}

// median runs f n times and returns the median of the times it measured.
func median(n int, f func() (time.Duration, error)) (float64, error) {
	times := make([]float64, 0, n)
	for range n {
		took, err := f()
		if err != nil {
			return 0, err
		}
		times = append(times, ms(took))
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// PeakRSS is the process's peak resident memory, VmHWM from /proc (0
// where there is none).
func PeakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// Medians summarises turns lo..hi (1-based, inclusive): median ms and mean
// bytes a turn.
func (r Report) Medians(lo, hi int) (ms float64, bytes float64) {
	lo, hi = max(lo, 1), min(hi, len(r.Turns))
	if lo > hi {
		return 0, 0
	}
	var times []float64
	var sum int64
	for _, t := range r.Turns[lo-1 : hi] {
		times = append(times, t.Ms)
		sum += t.Bytes
	}
	slices.Sort(times)
	return times[len(times)/2], float64(sum) / float64(hi-lo+1)
}

// Span is turns From…To: the medians of a turn's time and CPU time,
// and the mean bytes the process wrote a turn.
type Span struct {
	From    int     `json:"from"`
	To      int     `json:"to"`
	Ms      float64 `json:"ms"`
	CPUMs   float64 `json:"cpuMs"`
	Written float64 `json:"writtenBytes"`
}

// Slope is a turn's cost early in the thread (turns 91-110, past the
// first turns' set-up; 11-20 in a run shorter than 200) and in its last
// 20 turns (10): a turn should cost the same at any length.
type Slope struct {
	Early Span `json:"early"`
	Late  Span `json:"late"`
	// CPU is Late's CPU time over Early's (0 when not measured).
	CPU float64 `json:"cpu"`
}

func (r Report) slope() Slope {
	n := len(r.Turns)
	var s Slope
	switch {
	case n >= 200:
		s.Early, s.Late = r.Span(91, 110), r.Span(n-19, n)
	case n >= 20:
		s.Early, s.Late = r.Span(11, 20), r.Span(n-9, n)
	default:
		return s
	}
	if s.Early.CPUMs > 0 {
		s.CPU = s.Late.CPUMs / s.Early.CPUMs
	}
	return s
}

// Span sums up turns lo…hi (1-based, inclusive).
func (r Report) Span(lo, hi int) Span {
	lo, hi = max(lo, 1), min(hi, len(r.Turns))
	w := Span{From: lo, To: hi}
	if lo > hi {
		return w
	}
	var times, cpus []float64
	var sum int64
	for _, t := range r.Turns[lo-1 : hi] {
		times, cpus = append(times, t.Ms), append(cpus, t.CPUMs)
		sum += t.WrittenBytes
	}
	w.Ms, w.CPUMs, w.Written = Median(times), Median(cpus), float64(sum)/float64(hi-lo+1)
	return w
}

// written is what the process wrote so far (wchar in /proc/self/io: every
// write, to a file or a socket), 0 where it is not measured.
func written() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "wchar:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			return n
		}
	}
	return 0
}

// largest passes calls to the mock and remembers the largest request's
// tokens since it was last asked.
type largest struct {
	inner *model.Mock
	mu    sync.Mutex
	max   int
}

func (l *largest) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	n := req.TotalTokens()
	l.mu.Lock()
	l.max = max(l.max, n)
	l.mu.Unlock()
	return l.inner.Complete(ctx, req)
}

// ContextWindow is the mock's.
func (l *largest) ContextWindow(role string) int { return l.inner.ContextWindow(role) }

func (l *largest) take() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.max
	l.max = 0
	return n
}

// Requests is the median tokens a turn's requests carried, and the largest
// one request, over turns lo…hi (1-based, inclusive).
func (r Report) Requests(lo, hi int) (median, largest int) {
	lo, hi = max(lo, 1), min(hi, len(r.Turns))
	if lo > hi {
		return 0, 0
	}
	var ns []int
	for _, t := range r.Turns[lo-1 : hi] {
		ns = append(ns, t.PromptTokens)
		largest = max(largest, t.Largest)
	}
	slices.Sort(ns)
	return ns[len(ns)/2], largest
}
