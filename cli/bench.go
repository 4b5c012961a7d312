package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"rewind/cli/app"
	"rewind/engine/bench"
	"rewind/engine/seal"
	"rewind/store"
	"rewind/store/backend"
	"rewind/tui/termtext"
)

func newBenchCmd() *cobra.Command {
	var store, read string
	var asJSON, withFloor bool
	var turns, inlineBytes, processes int
	c := &cobra.Command{
		Use:   "bench",
		Short: "a long conversation on a new thread (mock, zero latency): time and bytes per turn, listing and loading times",
		Long: `A long conversation on a new thread, with the mock model at zero latency
and ten support sentences cycled: time and bytes stored per turn, then
listing and loading times and peak memory.`,
		Example: `  rewind bench --store sqlite:/tmp/b.db --turns 1000
  rewind bench --store memory: --turns 50 --json`,
		Args: between(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			if read != "" {
				return benchLoads(c, store, read)
			}
			if turns < 1 {
				return usagef("bench: --turns %d: give at least 1", turns)
			}
			if inlineBytes < 0 {
				return usagef("bench: --inline-bytes %d is negative", inlineBytes)
			}
			ctx, out, spec := c.Context(), c.OutOrStdout(), app.ResolveStore(store)
			if err := spec.Writable(c.Context()); err != nil {
				return err // a LangGraph database: refused before anything is written
			}
			st, keys, err := openBench(ctx, spec, out, asJSON)
			if err != nil {
				return err
			}
			defer st.Close()
			durability := backend.Durability(st)
			var progress func(bench.Turn)
			if !asJSON {
				progress = benchProgress(out, spec.Label(), durability, turns)
			}
			fl, removeFloor, err := benchFloor(ctx, st, withFloor)
			if err != nil {
				return err
			}
			defer removeFloor()
			rep, err := bench.Run(ctx, st, spec.Label(), bench.Options{Turns: turns, InlineBytes: inlineBytes, Keys: keys, Floor: fl}, progress)
			if err != nil {
				return err
			}
			rep.Durability = durability
			if spec.Shared() && processes > 0 {
				np, err := newProcessLoads(ctx, spec.Spec, rep, processes)
				if err != nil {
					return err
				}
				rep.NewProcess = &np
				if rep.Commands, err = commandTimes(ctx, spec.Spec, rep, processes); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(out, rep)
			}
			printBench(out, rep)
			return nil
		},
	}
	addStore(c, &store)
	addJSON(c, &asJSON)
	c.Flags().IntVar(&turns, "turns", 100, "how many turns to run")
	c.Flags().IntVar(&inlineBytes, "inline-bytes", 0, "attach an inline value of `B` bytes to every turn")
	c.Flags().BoolVar(&withFloor, "floor", true, "write each turn's rows into bare tables too (a file beside a SQLite store, a schema of its own on PostgreSQL) and compare")
	c.Flags().IntVar(&processes, "processes", 7, "time the loads in `N` new processes each (0: none; not on memory:)")
	// What each of those processes runs: load T@ID[,ID…] and print the
	// timings as JSON.
	c.Flags().StringVar(&read, "load", "", "")
	_ = c.Flags().MarkHidden("load")
	return c
}

// benchProgress prints a bench's heading and returns what prints a tenth
// of its turns as they end.
func benchProgress(out io.Writer, label, durability string, turns int) func(bench.Turn) {
	fmt.Fprintf(out, "bench on %s: %d turns of the ticket conversation, mock model at zero latency\n", termtext.Line(label), turns)
	if durability != "" {
		fmt.Fprintf(out, "  durability: %s\n", durability)
	}
	return func(t bench.Turn) {
		if t.Turn == 1 || t.Turn%max(turns/10, 1) == 0 {
			fmt.Fprintf(out, "  turn %5d: %7.2f ms (%.2f ms CPU), %2d checkpoints, %6.1f KB\n", t.Turn, t.Ms, t.CPUMs, t.Checkpoints, float64(t.Bytes)/1024)
		}
	}
}

// benchFloor is the floor a store's bench compares its turns with and
// what removes it (none for the memory store, or when not on).
func benchFloor(ctx context.Context, st store.Store, on bool) (bench.Floor, func(), error) {
	if !on {
		return nil, func() {}, nil
	}
	f, ok, err := backend.NewFloor(ctx, st)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: %w; or give --floor=false", err)
	}
	if !ok {
		return nil, func() {}, nil
	}
	return f, func() { _ = f.Remove() }, nil
}

// printBench prints a bench's summary lines.
func printBench(out io.Writer, rep bench.Report) {
	fmt.Fprintln(out, turnSummary(rep))
	if sl := slopeSummary(rep.Slope); sl != "" {
		fmt.Fprintln(out, sl)
	}
	if f := rep.Floor; f != nil {
		fmt.Fprintln(out, floorSummary(*f))
	}
	fmt.Fprintln(out, requestSummary(rep))
	fmt.Fprintf(out, "thread %s: %d checkpoints, %.1f MB; list %.2f ms; load latest %.3f ms (%.3f ms cached), middle %.3f ms (a new engine of this process); peak RSS %.0f MB\n",
		idText(rep.Thread), rep.Checkpoints, float64(rep.TotalBytes)/1e6, rep.HistoryMs, rep.GetLatestMs, rep.GetLatestWarmMs, rep.GetMiddleMs, float64(rep.RSSBytes)/1e6)
	if np := rep.NewProcess; np != nil {
		fmt.Fprintf(out, "in a new process each (%d, medians): open %.2f ms, then load latest %.3f ms (%.3f ms CPU), middle %.3f ms (%.3f ms CPU); the same process's next load %.3f ms (%.3f ms CPU)\n",
			np.Processes, np.OpenMs, np.LatestMs, np.LatestCPUMs, np.MiddleMs, np.MiddleCPUMs, np.ThenMs, np.ThenCPUMs)
	}
	if len(rep.Commands) > 0 {
		parts := make([]string, len(rep.Commands))
		for i, c := range rep.Commands {
			parts[i] = fmt.Sprintf("%s %.0f ms (%.0f ms CPU, %.0f MB)", c.Name, c.Ms, c.CPUMs, float64(c.RSSBytes)/1e6)
		}
		fmt.Fprintf(out, "commands, a new process each from start to exit (medians): %s\n", strings.Join(parts, "; "))
	}
}

// floorHead opens the floor's line.
const floorHead = "the floor (the same rows and commits in bare tables, as durable; medians a turn): "

// floorSummary compares a turn with the floor: the same rows in the same
// commits in bare tables, as durable as the store.
func floorSummary(f bench.FloorReport) string {
	span := func(s bench.FloorSpan) string {
		return fmt.Sprintf("turns %d-%d %.2f ms against %.2f (%.1fx), CPU %.2f ms against %.2f (%.1fx)", s.From, s.To, s.Ms, s.FloorMs, s.Times, s.CPUMs, s.FloorCPUMs, s.CPUTimes)
	}
	if f.Late == f.Early {
		return floorHead + span(f.Early)
	}
	return floorHead + span(f.Early) + "; " + span(f.Late)
}

// requestSummary says what the models were sent: a turn's requests early
// and late, and the largest one request against the context window.
func requestSummary(rep bench.Report) string {
	n := len(rep.Turns)
	lo := min(11, n)
	early, _ := rep.Requests(lo, min(lo+9, n))
	late, _ := rep.Requests(max(n-9, 1), n)
	_, largest := rep.Requests(1, n)
	return fmt.Sprintf("requests: %d tokens a turn at turns %d-%d, %d in the last 10; the largest request %d tokens of the %d-token context window (%d%%)",
		early, lo, min(lo+9, n), late, largest, rep.Window, largest*100/max(rep.Window, 1))
}

// benchLoads is a new process's part of the bench (--load T@ID,ID…):
// the loads' timings, as JSON.
func benchLoads(c *cobra.Command, storeFlag, arg string) error {
	at := strings.LastIndexByte(arg, '@')
	if at < 0 {
		return usagef("--load %q: give THREAD@ID[,ID…]", named(arg))
	}
	var ids []int64
	for f := range strings.SplitSeq(arg[at+1:], ",") {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil || id < 1 {
			return usagef("--load %q: %q is not a checkpoint id", named(arg), named(f))
		}
		ids = append(ids, id)
	}
	keys, err := app.Keys()
	if err != nil {
		return err
	}
	loads, err := bench.Load(c.Context(), app.ResolveStore(storeFlag).Open, keys, arg[:at], ids, os.Getenv("REWIND_BENCH_CPUPROFILE"))
	if err != nil {
		return err
	}
	return json.NewEncoder(c.OutOrStdout()).Encode(loads)
}

// benchExe is the binary a bench's new processes run: this one (the
// tests give the built rewind).
var benchExe = os.Executable

// newProcessLoads starts n processes for each of the thread's newest and
// middle checkpoints, interleaved, each loading it first and another old
// checkpoint after: the loads a command of its own pays.
func newProcessLoads(ctx context.Context, spec string, rep bench.Report, n int) (bench.NewProcess, error) {
	exe, err := benchExe()
	if err != nil {
		return bench.NewProcess{}, fmt.Errorf("bench: find this binary to time loads in new processes: %w; give --processes 0", err)
	}
	last, middle := rep.Checkpoints, max(rep.Checkpoints/2, 1)
	other := max(rep.Checkpoints/4, 1)
	var open, latest, mid, then, latestCPU, midCPU, thenCPU []float64
	for range n {
		for _, first := range []int64{last, middle} {
			cmd := exec.CommandContext(ctx, exe, "bench", "--store", spec, "--load", fmt.Sprintf("%s@%d,%d", rep.Thread, first, other))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			b, err := cmd.Output()
			if err != nil {
				return bench.NewProcess{}, fmt.Errorf("bench: a new process's loads: %w: %s", err, strings.TrimSpace(stderr.String()))
			}
			var l bench.Loads
			if err := json.Unmarshal(b, &l); err != nil || len(l.Ms) != 2 || len(l.CPUMs) != 2 {
				return bench.NewProcess{}, fmt.Errorf("bench: a new process's loads read %q: %v", b, err)
			}
			open, then, thenCPU = append(open, l.OpenMs), append(then, l.Ms[1]), append(thenCPU, l.CPUMs[1])
			if first == last {
				latest, latestCPU = append(latest, l.Ms[0]), append(latestCPU, l.CPUMs[0])
			} else {
				mid, midCPU = append(mid, l.Ms[0]), append(midCPU, l.CPUMs[0])
			}
		}
	}
	return bench.NewProcess{Processes: 2 * n, OpenMs: bench.Median(open), LatestMs: bench.Median(latest), MiddleMs: bench.Median(mid), ThenMs: bench.Median(then),
		LatestCPUMs: bench.Median(latestCPU), MiddleCPUMs: bench.Median(midCPU), ThenCPUMs: bench.Median(thenCPU)}, nil
}

// commandTimes runs whole rewind commands on the bench's thread, each in
// a new process, n times interleaved (--values, which reads every state,
// at most 3): what a person waits for, against a bare start.
func commandTimes(ctx context.Context, spec string, rep bench.Report, n int) ([]bench.Command, error) {
	exe, err := benchExe()
	if err != nil {
		return nil, fmt.Errorf("bench: find this binary to time commands in new processes: %w; give --processes 0", err)
	}
	last, middle := rep.Checkpoints, max(rep.Checkpoints/2, 1)
	t := rep.Thread
	cmds := []bench.Command{
		{Name: "a bare start", Args: []string{"--version"}},
		{Name: fmt.Sprintf("show @%d", last), Args: []string{"show", t, fmt.Sprint(last), "--store", spec}},
		{Name: fmt.Sprintf("show @%d", middle), Args: []string{"show", t, fmt.Sprint(middle), "--store", spec}},
		{Name: fmt.Sprintf("log (all %d, piped)", rep.Checkpoints), Args: []string{"log", t, "--store", spec}},
		{Name: fmt.Sprintf("log --values (all %d)", rep.Checkpoints), Args: []string{"log", t, "--values", "--store", spec}},
	}
	// Rounds each runs: every state read is seconds on a long thread.
	rounds := []int{n, n, n, n, min(n, 3)}
	dir, err := os.MkdirTemp("", "rewind-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench: a directory for the commands' figures: %w", err)
	}
	defer os.RemoveAll(dir)
	peak := filepath.Join(dir, "peak-rss")
	ms := make([][]float64, len(cmds))
	cpu := make([][]float64, len(cmds))
	rss := make([][]float64, len(cmds))
	for round := range n {
		for i, c := range cmds {
			if round >= rounds[i] {
				continue
			}
			cmd := exec.CommandContext(ctx, exe, c.Args...)
			var stderr strings.Builder
			cmd.Stdout, cmd.Stderr = io.Discard, &stderr
			cmd.Env = append(os.Environ(), peakRSSEnv+"="+peak)
			start := time.Now()
			if err := cmd.Run(); err != nil {
				return nil, fmt.Errorf("bench: rewind %s: %w: %s", strings.Join(c.Args, " "), err, strings.TrimSpace(stderr.String()))
			}
			ps := cmd.ProcessState
			ms[i] = append(ms[i], float64(time.Since(start).Microseconds())/1000)
			cpu[i] = append(cpu[i], float64((ps.UserTime()+ps.SystemTime()).Microseconds())/1000)
			b, err := os.ReadFile(peak)
			if err != nil {
				return nil, fmt.Errorf("bench: rewind %s said no peak memory: %w", strings.Join(c.Args, " "), err)
			}
			bytes, _ := strconv.ParseFloat(string(b), 64)
			rss[i] = append(rss[i], bytes)
		}
	}
	for i := range cmds {
		cmds[i].Runs, cmds[i].Ms, cmds[i].CPUMs, cmds[i].RSSBytes = len(ms[i]), bench.Median(ms[i]), bench.Median(cpu[i]), int64(bench.Median(rss[i]))
	}
	return cmds, nil
}

// turnSummary compares turns 11-20 (past the first turns' set-up) with the
// last ten, the flatness the long-conversation targets ask for. A run too
// short for both windows is summed up whole rather than shown as zeros.
func turnSummary(rep bench.Report) string {
	n := len(rep.Turns)
	if n < 20 {
		ms, bytes := rep.Medians(1, n)
		return fmt.Sprintf("turns 1-%d: median %.2f ms, %.1f KB a turn (run 20 or more to compare turns 11-20 with the last 10)", n, ms, bytes/1024)
	}
	early, earlyKB := rep.Medians(11, 20)
	late, lateKB := rep.Medians(n-9, n)
	return fmt.Sprintf("turns 11-20: median %.2f ms, %.1f KB a turn; last 10: median %.2f ms, %.1f KB a turn", early, earlyKB/1024, late, lateKB/1024)
}

// slopeSummary compares a turn early in the thread with the last ones:
// CPU time (steadier than the clock on a shared machine) and what the
// process wrote.
func slopeSummary(s bench.Slope) string {
	if s.Early.To == 0 || s.CPU == 0 {
		return ""
	}
	span := func(w bench.Span) string {
		return fmt.Sprintf("turns %d-%d %.2f ms CPU (%.2f ms), %.0f KB written", w.From, w.To, w.CPUMs, w.Ms, w.Written/1024)
	}
	return fmt.Sprintf("slope (medians a turn): %s; %s: %.2fx the CPU", span(s.Early), span(s.Late), s.CPU)
}

// openBench opens the bench's store and the keys it seals with
// ($REWIND_KEY_FILE, or none), said beside the store.
func openBench(ctx context.Context, spec app.Store, out io.Writer, asJSON bool) (store.Store, *seal.Keys, error) {
	keys, err := app.Keys()
	if err != nil {
		return nil, nil, err
	}
	st, err := spec.Open(ctx)
	if err != nil {
		return nil, nil, err
	}
	if id := keys.Sealing(); id != "" && !asJSON {
		fmt.Fprintf(out, "  encrypted at rest with key %s\n", termtext.Line(id))
	}
	return st, keys, nil
}
