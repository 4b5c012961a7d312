package storetest

// The process harness (capability Processes): what only another process
// can show. The child is Backend.Child, or else this test binary run again
// for the test that called Run alone, with childEnv naming its part; it
// opens the same store
// by its address (Backend.Reopen) and is SIGKILLed or SIGSTOPped for real.
// Written once, run on every backend that declares Processes; memory, which
// no other process can reach, skips them.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"rewind/store"
)

// The child's environment: its part, the store's address, and where a
// writer starts.
const (
	childEnv = "REWIND_STORETEST_CHILD"
	addrEnv  = "REWIND_STORETEST_ADDR"
	fromEnv  = "REWIND_STORETEST_FROM"
	// threadEnv names the thread a deleter deletes.
	threadEnv = "REWIND_STORETEST_THREAD"
)

var processTests = []struct {
	name  string
	needs []Capability
	run   func(t *testing.T, b Backend)
}{
	{"LockReleasedWhenHolderIsKilled", nil, testKilledHolder},
	{"KillMidWrite", nil, testKillMidWrite},
	{"KillInsideTransaction", []Capability{TxHook}, testKillInsideTx},
	{"StoppedWriterIsFenced", []Capability{Fencing}, testStoppedWriter},
	{"StoppedWriterIsFencedAcrossDelete", []Capability{Fencing}, testStoppedAcrossDelete},
	{"WatchOtherHandle", []Capability{Watch}, testWatchOtherHandle},
	{"WatchSeesAnotherProcess", []Capability{Watch}, testWatchProcess},
	{"LockHolderInAnotherProcess", []Capability{Watch}, testLockHolder},
	{"DeletedTextErasedAfterAReader", []Capability{Erasure}, testErasedAfterReader},
	{"TenantChainOfAClaimMadeElsewhere", nil, testTenantChainOfAClaimMadeElsewhere},
}

func runProcesses(t *testing.T, b Backend) {
	t.Run("Processes", func(t *testing.T) {
		if !b.Has(Processes) {
			t.Skipf("the backend does not declare %s: no other process can reach it", Processes)
		}
		if b.Fresh == nil || b.Reopen == nil {
			t.Fatalf("the backend declares %s but has no Fresh or Reopen", Processes)
		}
		for _, pt := range processTests {
			t.Run(pt.name, func(t *testing.T) {
				for _, need := range pt.needs {
					if !b.Has(need) {
						t.Skipf("the backend does not declare %s", need)
					}
				}
				pt.run(t, b)
			})
		}
	})
}

// A child's parts.
const (
	partLock    = "lock"          // take the lock of "t" and hold it
	partWrite   = "write"         // put killCheckpoint from $FROM on, forever
	partHook    = "hook-kill"     // put checkpoint 3 and die inside its transaction
	partFenced  = "fenced-writer" // fence "t", then write as told on stdin
	partPutter  = "putter"        // put "t"'s checkpoints as told on stdin
	partReader  = "reader"        // hold a read (Backend.HoldRead) until told "end"
	partDeleter = "deleter"       // delete $THREAD, say what Unerased says, close
	partOpen    = "open"          // open the store and keep it open
	childExitOK = 0
)

// Child plays the part of a process test's child that the environment
// names, on b (its Reopen, InsideTx and HoldRead): the main of a
// Backend.Child binary. It never returns.
func Child(b Backend) {
	if os.Getenv(childEnv) == "" {
		fmt.Fprintf(os.Stderr, "a child of storetest's process tests: run by them, with %s set\n", childEnv)
		os.Exit(2)
	}
	runChild(b)
}

// runChild plays the child's part and exits; it never returns.
func runChild(b Backend) {
	part, addr := os.Getenv(childEnv), os.Getenv(addrEnv)
	ctx := context.Background()
	if part == partReader {
		readChild(ctx, b, addr)
	}
	if part != partFenced && part != partPutter { // those read their orders from stdin
		go func() { // die with the parent, whose end of stdin then closes
			_, _ = io.Copy(io.Discard, os.Stdin)
			os.Exit(3)
		}()
	}
	if b.Reopen == nil {
		fmt.Println("error: the backend has no Reopen")
		os.Exit(2)
	}
	s, err := b.Reopen(ctx, addr)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	switch part {
	case partLock:
		if _, err := s.Lock(ctx, "t"); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println("locked")
	case partHook:
		hookChild(ctx, s, b)
	case partFenced:
		fencedChild(ctx, s)
	case partPutter:
		putterChild(ctx, s)
	case partDeleter:
		fmt.Println("deleted", s.DeleteThread(ctx, os.Getenv(threadEnv)))
		u, err := s.(store.Erasing).Unerased(ctx)
		fmt.Println("unerased", u, err)
		fmt.Println("closed", s.Close())
		os.Exit(childExitOK)
	case partOpen:
		fmt.Println("opened")
	case partWrite:
		from, _ := strconv.ParseInt(os.Getenv(fromEnv), 10, 64)
		for id := from; ; id++ {
			if err := s.PutCheckpoint(ctx, killCheckpoint(id), killEvents(id)); err != nil {
				fmt.Println("error", err)
				os.Exit(2)
			}
			fmt.Println("ok", id)
		}
	default:
		fmt.Println("error: unknown part", part)
		os.Exit(2)
	}
	time.Sleep(time.Minute)
	os.Exit(childExitOK)
}

// readChild plays partReader: another program reading the store's
// files, not a store. It never returns.
func readChild(ctx context.Context, b Backend, addr string) {
	if b.HoldRead == nil {
		fmt.Println("error: the backend has no HoldRead")
		os.Exit(2)
	}
	end, err := b.HoldRead(ctx, addr)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("reading")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() == "end" {
			fmt.Println("ended", end())
		}
	}
	os.Exit(3)
}

// hookChild plays partHook: the drills' mid-transaction kill point, it
// dies inside the put. It never returns.
func hookChild(ctx context.Context, s store.Store, b Backend) {
	s.(txHooker).SetTxHook(func(stage string) {
		line := "hook " + stage
		if b.InsideTx != nil {
			if err := b.InsideTx(s); err != nil {
				line += ": " + err.Error()
			}
		}
		fmt.Println(line)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	})
	err := s.PutCheckpoint(ctx, killCheckpoint(3), killEvents(3))
	fmt.Println("returned", err)
	os.Exit(childExitOK)
}

// fencedChild plays partFenced: a worker that fences the thread and then
// writes when told to, one "put ID" or "writes ID" line at a time. It
// never returns.
func fencedChild(ctx context.Context, s store.Store) {
	epoch, err := s.Fence(ctx, "t")
	fmt.Println("epoch", epoch, err)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var what string
		var id int64
		_, _ = fmt.Sscan(in.Text(), &what, &id)
		if what == "put" {
			err = s.PutCheckpoint(ctx, withEpoch(killCheckpoint(id), epoch), killEvents(id))
		} else {
			err = s.PutWrites(ctx, store.TaskWrites{ThreadID: "t", CheckpointID: id, TaskID: "late", Writes: []byte(`{}`), Epoch: epoch})
		}
		switch {
		case err == nil:
			fmt.Println("ok", what, id)
		case errors.Is(err, store.ErrFenced):
			fmt.Println("fenced", what, id)
		default:
			fmt.Println("error", what, id, err)
		}
	}
	os.Exit(3)
}

// putterChild plays partPutter: "put ID" puts checkpoint ID of "t",
// unfenced, its parent ID-1. It never returns.
func putterChild(ctx context.Context, s store.Store) {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var id int64
		_, _ = fmt.Sscanf(in.Text(), "put %d", &id)
		if err := s.PutCheckpoint(ctx, checkpoint("t", id, id-1), nil); err != nil {
			fmt.Println("error", err)
			continue
		}
		fmt.Println("ok", id)
	}
	os.Exit(3)
}

// proc is a child process: its orders (stdin) and what it says (stdout,
// one line at a time).
type proc struct {
	cmd    *exec.Cmd
	orders io.Writer
	out    *bufio.Scanner
}

// child starts b.Child, or else the test binary again for the test that
// called Run, to play part on the store at addr.
func child(t *testing.T, b Backend, part, addr string, env ...string) *proc {
	t.Helper()
	root, _, _ := strings.Cut(t.Name(), "/")
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(root)+"$")
	if b.Child != "" {
		cmd = exec.Command(b.Child)
	}
	// GORACE: under -race, a process sleeps a second as it exits.
	cmd.Env = append(os.Environ(), append(env, childEnv+"="+part, addrEnv+"="+addr, "GORACE=atexit_sleep_ms=0")...)
	cmd.Stderr = os.Stderr
	orders, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return &proc{cmd: cmd, orders: orders, out: bufio.NewScanner(stdout)}
}

// say gives the child an order (none when empty) and wants its next line.
func (p *proc) say(t *testing.T, order, want string) {
	t.Helper()
	if order != "" {
		fmt.Fprintln(p.orders, order)
	}
	if !p.out.Scan() || p.out.Text() != want {
		t.Fatalf("child said %q (%v), want %q", p.out.Text(), p.out.Err(), want)
	}
}

// line is the child's next line.
func (p *proc) line(t *testing.T) string {
	t.Helper()
	if !p.out.Scan() {
		t.Fatalf("the child said nothing more (%v)", p.out.Err())
	}
	return p.out.Text()
}

// kill sends SIGKILL and wants the child dead by it.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.wantKilled(t)
}

func (p *proc) wantKilled(t *testing.T) {
	t.Helper()
	if err := p.cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child ended with %v, want killed", err)
	}
}

// stop sends SIGSTOP and waits until the child is stopped; cont continues it.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitState(t, p.cmd.Process.Pid, 'T')
}

func (p *proc) cont(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// waitState waits until process pid is in state (from /proc/PID/stat).
func waitState(t *testing.T, pid int, state byte) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		// The state follows the command name, which is in parentheses.
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && b[i+2] == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never reached state %c: %s", pid, state, b)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitLock takes thread's lock once the store has seen its dead holder
// go (a server notices a closed connection in its own time).
func waitLock(t *testing.T, s store.Store, thread string) func() error {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		release, err := s.Lock(t.Context(), thread)
		if err == nil {
			return release
		}
		if !errors.Is(err, store.ErrLocked) || time.Now().After(deadline) {
			t.Fatalf("Lock after the holder was killed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reopen opens the store at addr again, closed with t.Cleanup.
func reopen(t *testing.T, b Backend, addr string) store.Store {
	t.Helper()
	s, err := b.Reopen(t.Context(), addr)
	if err != nil {
		t.Fatalf("reopen after the kill: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A lock's holder killed by SIGKILL releases it: the lock is held (another
// thread's is free) while it lives, and can be taken once it is dead.
func testKilledHolder(t *testing.T, b Backend) {
	s, addr := b.Fresh(t)
	p := child(t, b, partLock, addr)
	p.say(t, "", "locked")
	_, err := s.Lock(t.Context(), "t")
	wantIs(t, err, store.ErrLocked)
	release, err := s.Lock(t.Context(), "other")
	if err != nil {
		t.Fatalf("Lock of another thread: %v", err)
	}
	_ = release()

	p.kill(t)
	if err := waitLock(t, s, "t")(); err != nil {
		t.Fatal(err)
	}
}

// A writer killed mid-write leaves a store that opens, holds every
// checkpoint it acknowledged, and has no half-written one.
func testKillMidWrite(t *testing.T, b Backend) {
	_, addr := b.Fresh(t)
	from := int64(1)
	for round := range 3 {
		p := child(t, b, partWrite, addr, fmt.Sprint(fromEnv+"=", from))
		var acked int64
		// Killed once it has acknowledged killAfter commits, while it goes
		// on writing.
		for acked < from+killAfter && p.out.Scan() {
			if _, err := fmt.Sscanf(p.out.Text(), "ok %d", &acked); err != nil {
				t.Fatalf("child: %s", p.out.Text())
			}
		}
		p.kill(t)
		for p.out.Scan() { // what it printed before it died
			_, _ = fmt.Sscanf(p.out.Text(), "ok %d", &acked)
		}
		s, err := b.Reopen(t.Context(), addr)
		if err != nil {
			t.Fatalf("round %d: reopen after kill: %v", round, err)
		}
		latest := verifyKilled(t, s)
		s.Close()
		if latest < acked {
			t.Fatalf("round %d: latest is %d, but the child committed %d", round, latest, acked)
		}
		t.Logf("round %d: killed after %d, store holds 1..%d", round, acked, latest)
		from = latest + 1
	}
	if b.AfterKills != nil {
		b.AfterKills(t, addr)
	}
}

// killAfter is how many commits a writer in testKillMidWrite makes
// before it is killed: past SQLite's first WAL fold (every 64 commits),
// so the kill finds a store that has folded. It was 150 a round, each a
// synced commit: the slowest test of both store packages.
const killAfter = 80

// A writer killed from PutCheckpoint's hook, after its rows are written and
// before it commits: the checkpoint is absent, the earlier ones are intact,
// and the same put then succeeds (once the store has rolled the dead
// writer's transaction back).
func testKillInsideTx(t *testing.T, b Backend) {
	s, addr := b.Fresh(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for id := int64(1); id <= 2; id++ {
		if err := s.PutCheckpoint(ctx, killCheckpoint(id), killEvents(id)); err != nil {
			t.Fatal(err)
		}
	}
	p := child(t, b, partHook, addr)
	p.say(t, "", "hook checkpoint-written")
	p.wantKilled(t)
	if p.out.Scan() {
		t.Fatalf("child went on after the hook: %q", p.out.Text())
	}

	s = reopen(t, b, addr)
	if _, err := s.Get(ctx, "t", 3); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the killed transaction's checkpoint is visible (Get: %v)", err)
	}
	if evs, err := s.Events(ctx, "t", 3); err != nil || len(evs) != 0 {
		t.Errorf("the killed transaction's events are visible: %v, %v", evs, err)
	}
	if latest := verifyKilled(t, s); latest != 2 {
		t.Fatalf("latest = %d, want 2", latest)
	}
	if err := s.PutCheckpoint(ctx, killCheckpoint(3), killEvents(3)); err != nil {
		t.Fatalf("retry of the killed put: %v", err)
	}
	if latest := verifyKilled(t, s); latest != 3 {
		t.Fatalf("latest after the retry = %d, want 3", latest)
	}
}

// Issue 5's drill on the store: a writer is stopped with SIGSTOP, another
// takes the thread over (Fence) and goes on, and the first one, continued,
// has its late writes refused: the chain does not fork.
func testStoppedWriter(t *testing.T, b Backend) {
	s, addr := b.Fresh(t)
	ctx := t.Context()
	put(t, s, killCheckpoint(1), killEvents(1)...)
	p := child(t, b, partFenced, addr)
	p.say(t, "", "epoch 1 <nil>")
	p.say(t, "put 2", "ok put 2")

	p.stop(t)
	// Its next orders wait in the pipe while it is stopped.
	late := []string{"put 3", "writes 2", "put 4"}
	for _, order := range late {
		fmt.Fprintln(p.orders, order)
	}
	epoch, err := s.Fence(ctx, "t")
	if err != nil || epoch != 2 {
		t.Fatalf("takeover Fence = %d, %v; want 2", epoch, err)
	}
	mine := store.Checkpoint{ThreadID: "t", ID: 3, ParentID: 2, State: []byte(`{"by":"the new writer"}`), Epoch: epoch}
	if err := s.PutCheckpoint(ctx, mine, nil); err != nil {
		t.Fatalf("the new writer's put: %v", err)
	}
	p.cont(t)
	for _, order := range late {
		p.say(t, "", "fenced "+order)
	}

	h, err := s.History(ctx, "t", 0, 0)
	if err != nil || !slices.Equal(idsOf(h), []int64{3, 2, 1}) || h[0].ParentID != 2 {
		t.Fatalf("history after the late writes = %v, %v; want 3 (the new writer's) ← 2 ← 1", idsOf(h), err)
	}
	if got, err := s.Get(ctx, "t", 3); err != nil || !sameJSON(got.State, mine.State) {
		t.Fatalf("checkpoint 3 = %s, %v; want the new writer's", got.State, err)
	}
	if ws, err := s.Writes(ctx, "t", 2); err != nil || len(ws) != 0 {
		t.Errorf("the stopped writer's late writes were stored: %v, %v", ws, err)
	}
}

// Issue 11's first case on the store: a writer process is stopped with
// SIGSTOP, the thread is deleted and a new writer starts it again from 1;
// the first writer, continued, has every late write refused, though its
// next checkpoint would fit on top of the new writer's chain.
func testStoppedAcrossDelete(t *testing.T, b Backend) {
	s, addr := b.Fresh(t)
	ctx := t.Context()
	put(t, s, killCheckpoint(1), killEvents(1)...)
	p := child(t, b, partFenced, addr)
	p.say(t, "", "epoch 1 <nil>")
	p.say(t, "put 2", "ok put 2")

	p.stop(t)
	late := []string{"put 3", "writes 2", "writes 1", "put 1", "put 4"}
	for _, order := range late {
		fmt.Fprintln(p.orders, order)
	}
	if err := s.DeleteThread(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	epoch, err := s.Fence(ctx, "t")
	if err != nil || epoch <= 1 {
		t.Fatalf("Fence after DeleteThread = %d, %v; want more than the stopped writer's 1", epoch, err)
	}
	var mine []store.Checkpoint
	for id := int64(1); id <= 2; id++ {
		cp := store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, State: fmt.Appendf(nil, `{"by":"the new writer","id":%d}`, id), Epoch: epoch}
		if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
			t.Fatalf("the new writer's put: %v", err)
		}
		mine = append(mine, cp)
	}
	p.cont(t)
	for _, order := range late {
		p.say(t, "", "fenced "+order)
	}

	h, err := s.History(ctx, "t", 0, 0)
	if err != nil || !slices.Equal(idsOf(h), []int64{2, 1}) {
		t.Fatalf("history after the late writes = %v, %v; want the new writer's 2 ← 1", idsOf(h), err)
	}
	for _, cp := range mine {
		if got, err := s.Get(ctx, "t", cp.ID); err != nil || !sameJSON(got.State, cp.State) {
			t.Errorf("checkpoint %d = %s, %v; want the new writer's", cp.ID, got.State, err)
		}
		if ws, err := s.Writes(ctx, "t", cp.ID); err != nil || len(ws) != 0 {
			t.Errorf("the stopped writer's late writes were stored at %d: %v, %v", cp.ID, ws, err)
		}
	}
}

// verifyKilled checks every checkpoint the killed writers wrote and returns
// the newest id.
func verifyKilled(t *testing.T, s store.Store) int64 {
	t.Helper()
	ctx := t.Context()
	// History has the states: these rows have no Meta. A server may still
	// be committing the killed writer's last transaction (PostgreSQL ends
	// a dead client's session when it notices), so the two reads are taken
	// again until no commit landed between them.
	var history []store.Checkpoint
	var all []store.Event
	for try := 0; ; try++ {
		h1, err := s.History(ctx, "t", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := s.Events(ctx, "t", 0)
		if err != nil {
			t.Fatal(err)
		}
		h2, err := s.History(ctx, "t", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(h1) == len(h2) || try == 50 {
			history, all = h2, evs
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	events := map[int64]int{}
	for _, ev := range all {
		events[ev.CheckpointID]++
	}
	stored := map[int64]bool{}
	for _, got := range history {
		stored[got.ID] = true
	}
	for i, got := range history {
		id := history[0].ID - int64(i)
		want := killCheckpoint(id)
		if got.ID != id || got.ParentID != want.ParentID || !sameJSON(got.State, want.State) {
			t.Fatalf("checkpoint %d: got id %d, parent %d, %d state bytes; want parent %d, %d bytes",
				id, got.ID, got.ParentID, len(got.State), want.ParentID, len(want.State))
		}
		if got.ParentID != 0 && !stored[got.ParentID] {
			t.Fatalf("checkpoint %d: its parent %d is missing", id, got.ParentID)
		}
		if events[id] != 3 {
			t.Fatalf("checkpoint %d: %d events; want 3", id, events[id])
		}
	}
	if len(all) != 3*len(history) {
		t.Fatalf("%d events for %d checkpoints; want 3 each and no stray one", len(all), len(history))
	}
	if len(history) == 0 || history[len(history)-1].ID != 1 {
		t.Fatalf("history of %d checkpoints does not go back to 1", len(history))
	}
	return history[0].ID
}

// killCheckpoint is deterministic, of varied size (up to ~200 KB) so that
// some transactions span many pages, and every seventh one is a fork.
func killCheckpoint(id int64) store.Checkpoint {
	parent := id - 1
	if id%7 == 0 {
		parent = id / 2
	}
	pad := strings.Repeat("x", int(id*7919%200_000))
	state, _ := json.Marshal(map[string]any{"id": id, "pad": pad})
	return store.Checkpoint{ThreadID: "t", ID: id, ParentID: parent, State: state}
}

func killEvents(id int64) []store.Event {
	return []store.Event{
		{Type: "node.started", Payload: fmt.Appendf(nil, `{"id":%d}`, id)},
		{Type: "model.called"},
		{Type: "node.finished", Payload: fmt.Appendf(nil, `{"id":%d}`, id)},
	}
}

// A read in another process that began before a delete keeps the deleted
// thread's text in the store's files (SQLite: the WAL and the file's old
// pages) past the deleting process's end, as `rewind rm` next to a long
// read did: the deleting process is told so (Unerased names the reader),
// and once the read is over the next process to open the store erases
// it. Every handle stays open meanwhile, so no last close empties the
// files instead.
func testErasedAfterReader(t *testing.T, b Backend) {
	if b.HoldRead == nil && b.Child == "" || b.Leaks == nil {
		t.Fatalf("the backend declares %s and %s but has no HoldRead (nor Child) or Leaks", Erasure, Processes)
	}
	ctx := t.Context()
	s, addr := b.Fresh(t)
	text := fmt.Sprintf("SENTINEL%x", time.Now().UnixNano())
	put(t, s, checkpoint("kept", 1, 0))
	thread := secretThread(t, s, text)
	if len(b.Leaks(t, addr, text)) == 0 {
		t.Fatal("the text is in no file before the delete: the test cannot see a leak")
	}
	reader := child(t, b, partReader, addr)
	reader.say(t, "", "reading")
	pid := fmt.Sprintf("pid %d", reader.cmd.Process.Pid)

	deleter := child(t, b, partDeleter, addr, threadEnv+"="+thread)
	deleter.say(t, "", "deleted <nil>")
	if u := deleter.line(t); !strings.HasPrefix(u, "unerased ") || !strings.Contains(u, pid) || !strings.HasSuffix(u, " <nil>") {
		t.Errorf("the deleting process's Unerased said %q; want what keeps the text, naming the reader (%s)", u, pid)
	}
	deleter.say(t, "", "closed <nil>")
	if err := deleter.cmd.Wait(); err != nil {
		t.Fatalf("the deleting process: %v", err)
	}
	if len(b.Leaks(t, addr, text)) == 0 {
		t.Fatal("the text is in no file while the read lasts: the test cannot see what it tests")
	}
	if u, err := s.(store.Erasing).Unerased(ctx); !strings.Contains(u, pid) || err != nil {
		t.Errorf("another handle's Unerased while the read lasts = %q, %v; want it named (%s)", u, err, pid)
	}

	reader.say(t, "end", "ended <nil>")
	opener := child(t, b, partOpen, addr)
	opener.say(t, "", "opened")
	if leaks := b.Leaks(t, addr, text); len(leaks) > 0 {
		t.Errorf("the read ended and another process opened the store, yet the deleted thread's text is still in %s", strings.Join(leaks, ", "))
	}
	if u, err := s.(store.Erasing).Unerased(ctx); u != "" || err != nil {
		t.Errorf("Unerased once erased = %q, %v; want \"\"", u, err)
	}
}
