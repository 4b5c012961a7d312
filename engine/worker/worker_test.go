package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"rewind/cli/rewindbin"
	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/engine/worker"
	"rewind/store/backend/backendtest"
	"rewind/store/postgres/pgtest"
	"rewind/store/sqlite"
)

// No test here is about a commit surviving an OS crash (backendtest.SyncNormal).
func TestMain(m *testing.M) {
	backendtest.SyncNormal()
	rewindbin.Exit(pgtest.Run(m))
}

// buildRewind is the rewind binary the tests share: one link, not one
// per test.
func buildRewind(t *testing.T) string { return rewindbin.Path(t) }

const sentence = "My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel now, and can I get a refund if it is lost?"

// interrupted makes a thread that waits before its three executors.
func interrupted(t *testing.T, path, thread string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, err := engine.New(st, ticket.NewGraph(), ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(ctx, thread, ticket.Input(sentence), engine.RunConfig{InterruptBefore: []string{ticket.NodeExecutor}}); err != nil {
		t.Fatal(err)
	}
}

type outcome struct {
	result *engine.Result
	err    string
	killed bool
	code   int
	stderr string
}

func collect(p *worker.Proc) outcome {
	var o outcome
	for m := range p.Messages() {
		if m.Result != nil {
			o.result = m.Result
		}
		if m.Error != "" {
			o.err = m.Error
		}
	}
	o.killed, o.code, o.stderr = p.Wait()
	return o
}

func TestTwoWorkersResumingAtOnceOnlyOneProceeds(t *testing.T) {
	t.Parallel()
	exe := buildRewind(t)
	path := filepath.Join(t.TempDir(), "w.db")
	interrupted(t, path, "race")
	ctx := context.Background()
	var wg sync.WaitGroup
	outs := make([]outcome, 2)
	for i := range outs {
		p, err := worker.Start(ctx, exe, []string{"worker", "resume", "race", "--store", "sqlite:" + path, "--mock-latency", "150ms"}, os.Environ())
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(i int) { defer wg.Done(); outs[i] = collect(p) }(i)
	}
	wg.Wait()
	done, refused := 0, 0
	for _, o := range outs {
		switch {
		case o.result != nil && o.result.Status == "done" && o.code == 0:
			done++
		case strings.Contains(o.err, "being run by another process") && o.code == 1:
			refused++
		default:
			t.Errorf("unexpected outcome %+v", o)
		}
	}
	if done != 1 || refused != 1 {
		t.Fatalf("%d finished and %d refused, want exactly one of each", done, refused)
	}
}

func TestKilledWorkerIsResumedByANewOne(t *testing.T) {
	t.Parallel()
	exe := buildRewind(t)
	path := filepath.Join(t.TempDir(), "w.db")
	interrupted(t, path, "k")
	ctx := context.Background()
	p, err := worker.Start(ctx, exe, []string{"worker", "resume", "k", "--store", "sqlite:" + path, "--mock-latency", "2s"}, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	// Kill it from outside, as a person would with kill -9, once it runs.
	for m := range p.Messages() {
		if m.Event != nil && m.Event.Type == engine.EventNodeStarted {
			if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if killed, _, _ := p.Wait(); !killed {
		t.Fatal("the worker was not killed by SIGKILL")
	}
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	latest, err := st.Latest(ctx, "k")
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	q, err := worker.Start(ctx, exe, []string{"worker", "resume", "k", "--store", "sqlite:" + path}, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	o := collect(q)
	if o.result == nil || o.result.Status != "done" || o.result.Start != latest.ID {
		t.Fatalf("resume after the kill: %+v", o)
	}
	if o.result.Steps[0].ModelCalls["executor"] != 3*ticket.MockCallsPerSubtask {
		t.Fatalf("resumed superstep calls %v, want the 3 pending executors' %d each", o.result.Steps[0].ModelCalls, ticket.MockCallsPerSubtask)
	}
}

// A worker stopped with SIGSTOP while another takes the thread over: when
// it is continued, its late writes are refused and the chain does not fork.
func TestStoppedWorkerIsFencedOutByATakeOver(t *testing.T) {
	t.Parallel()
	exe := buildRewind(t)
	path := filepath.Join(t.TempDir(), "w.db")
	interrupted(t, path, "stop")
	ctx := context.Background()
	spec := "sqlite:" + path
	a, err := worker.Start(ctx, exe, []string{"worker", "resume", "stop", "--store", spec, "--mock-latency", "1500ms"}, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	started := 0
	for m := range a.Messages() {
		if m.Event != nil && m.Event.Type == engine.EventNodeStarted {
			if started++; started == 3 {
				break
			}
		}
	}
	if err := syscall.Kill(a.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Without --take-over the stopped worker still owns the thread.
	busy, err := worker.Start(ctx, exe, []string{"worker", "resume", "stop", "--store", spec}, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	if o := collect(busy); !strings.Contains(o.err, "being run by another process") {
		_ = syscall.Kill(a.Pid(), syscall.SIGCONT)
		t.Fatalf("resume while the owner is stopped: %+v", o)
	}
	b, err := worker.Start(ctx, exe, []string{"worker", "resume", "stop", "--store", spec, "--take-over"}, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	ob := collect(b)
	if err := syscall.Kill(a.Pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	oa := collect(a)
	if ob.result == nil || ob.result.Status != "done" {
		t.Fatalf("take-over: %+v", ob)
	}
	if oa.code != 1 || !strings.Contains(oa.err, "took over") {
		t.Fatalf("the stopped worker was not fenced out: code %d, %q", oa.code, oa.err)
	}
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.History(ctx, "stop", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	children := map[int64]int{}
	for _, r := range rows {
		if children[r.ParentID]++; r.ParentID != 0 && children[r.ParentID] > 1 {
			t.Fatalf("checkpoint %d has two children: the chain forked", r.ParentID)
		}
	}
	if latest := rows[0]; latest.ID != ob.result.Checkpoint {
		t.Fatalf("latest checkpoint %d, the take-over finished at %d", latest.ID, ob.result.Checkpoint)
	}
}

// Issue 11's first case with real processes: a worker running a new
// thread is stopped with SIGSTOP mid-superstep, the thread is deleted with
// take-over and run again by another worker, which stops before the
// executors; the stopped worker, continued, would write its executors'
// results and its next checkpoint on top of the new chain: it is fenced
// out, and the new chain is untouched.
func TestStoppedWorkerIsFencedAcrossDelete(t *testing.T) {
	t.Parallel()
	exe := buildRewind(t)
	path := filepath.Join(t.TempDir(), "w.db")
	ctx := context.Background()
	spec := "sqlite:" + path
	a, err := worker.Start(ctx, exe, []string{"worker", "run", "--thread", "d", "--input", sentence, "--store", spec, "--mock-latency", "1500ms"}, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	executors := 0
	for m := range a.Messages() {
		if m.Event != nil && m.Event.Type == engine.EventNodeStarted && m.Event.Node == ticket.NodeExecutor {
			if executors++; executors == 3 {
				break
			}
		}
	}
	if err := syscall.Kill(a.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(a.Pid(), syscall.SIGCONT)

	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, err := engine.New(st, ticket.NewGraph(), ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteThread(ctx, "d", false); !strings.Contains(fmt.Sprint(err), "being run by another process") {
		t.Fatalf("DeleteThread while the worker is stopped = %v, want a refusal", err)
	}
	if err := e.DeleteThread(ctx, "d", true); err != nil {
		t.Fatalf("DeleteThread with take-over: %v", err)
	}
	b, err := worker.Start(ctx, exe, []string{"worker", "run", "--thread", "d", "--input", sentence, "--store", spec, "--take-over", "--interrupt-before", ticket.NodeExecutor}, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	ob := collect(b)
	if ob.result == nil || ob.result.Status != "interrupted" {
		t.Fatalf("the new run: %+v", ob)
	}
	if err := syscall.Kill(a.Pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	oa := collect(a)
	if oa.code != 1 || !strings.Contains(oa.err, "took over") {
		got := "no result"
		if oa.result != nil {
			got = fmt.Sprintf("%s at checkpoint %d", oa.result.Status, oa.result.Checkpoint)
		}
		t.Fatalf("the stopped worker was not fenced out: code %d, %q, %s", oa.code, oa.err, got)
	}
	rows, err := st.History(ctx, "d", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || rows[0].ID != ob.result.Checkpoint {
		t.Fatalf("checkpoints %d, newest %d; want the new run's, ending at %d", len(rows), rows[0].ID, ob.result.Checkpoint)
	}
	if ws, err := st.Writes(ctx, "d", ob.result.Checkpoint); err != nil || len(ws) != 0 {
		t.Errorf("the stopped worker's executor writes landed on the new run's checkpoint: %d, %v", len(ws), err)
	}
}

// A worker's line that is not a message is quoted, cut short, in the
// error the parent reports: cut between characters (half an "é" quotes
// as \xc3, which the worker never wrote).
func TestANonMessageLineIsCutBetweenCharacters(t *testing.T) {
	t.Parallel()
	line := "a" + strings.Repeat("é", 150) // byte 200 falls inside an é
	p, err := worker.Start(context.Background(), "/bin/sh", []string{"-c", `printf '%s\n' "$LINE"`}, []string{"LINE=" + line})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for m := range p.Messages() {
		got = append(got, m.Error)
	}
	if len(got) != 1 || strings.Contains(got[0], `\x`) || !strings.Contains(got[0], "éé…") {
		t.Errorf("the line that is not a message is reported cut inside a character (or not cut): %q", got)
	}
}
