package postgres

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"rewind/store"
)

// decodesSame reports whether a and b decode to the same value.
func decodesSame(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// tricky are documents holding what jsonb refuses, or the marker that
// stands in for it.
var tricky = []string{
	`{"s":"a\u0000b"}`,
	`{"a\u0000":"\u0000","b":["\u0000\u0000",{"\u0000":null}]}`,
	`{"lone":"\ud800","low":"x\uDC00y","pair":"\ud83d\ude00","hi-then-nul":"\ud800\u0000"}`,
	`{"m":"` + "\uE000" + `","m0":"` + "\uE0000" + `","mm":"` + "\uE000\uE000" + `s0041","esc":"\ue000\uE000"}`,
	`{"mix":"\\u0000 is not NUL","bs":"\\\u0000"}`,
	`{"n":1.50,"big":123456789012345678901234567890,"e":1e3,"t":true,"z":null}`,
}

func TestDocumentsRoundTrip(t *testing.T) {
	s, _ := openFresh(t)
	ctx := context.Background()
	for i, doc := range tricky {
		thread := fmt.Sprint("rt", i)
		cp := store.Checkpoint{ThreadID: thread, ID: 1, State: []byte(doc)}
		ev := []store.Event{{ThreadID: thread, CheckpointID: 1, Seq: 1, Type: "x", Payload: []byte(doc)}}
		if err := s.PutCheckpoint(ctx, cp, ev); err != nil {
			t.Fatalf("%s: PutCheckpoint: %v", doc, err)
		}
		if err := s.PutWrites(ctx, store.TaskWrites{ThreadID: thread, CheckpointID: 1, TaskID: "t", Writes: []byte(doc)}); err != nil {
			t.Fatalf("%s: PutWrites: %v", doc, err)
		}
		got, err := s.Get(ctx, thread, 1)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := s.Writes(ctx, thread, 1)
		if err != nil || len(ws) != 1 {
			t.Fatalf("Writes = %v, %v", ws, err)
		}
		es, err := s.Events(ctx, thread, 1)
		if err != nil || len(es) != 1 {
			t.Fatalf("Events = %v, %v", es, err)
		}
		for what, back := range map[string][]byte{"state": got.State, "writes": ws[0].Writes, "payload": es[0].Payload} {
			if !decodesSame(t, []byte(doc), back) {
				t.Errorf("%s: %s came back as %s", doc, what, back)
			}
			// Go decodes any lone surrogate to U+FFFD, so check they
			// survive as escapes, and that NULs are all there.
			for _, esc := range []string{`\u0000`, `\ud800`, `\udc00`} {
				if n, m := strings.Count(strings.ToLower(doc), esc), strings.Count(strings.ToLower(string(back)), esc); n != m {
					t.Errorf("%s: %s came back as %s: %d %s, want %d", doc, what, back, m, esc, n)
				}
			}
		}
		// Same content spelt differently is the same checkpoint: a no-op.
		var v any
		dec := json.NewDecoder(strings.NewReader(doc))
		dec.UseNumber() // keep big numbers exact
		_ = dec.Decode(&v)
		if strings.Contains(doc, `\ud800`) || strings.Contains(doc, `\uDC00`) {
			v = nil // re-encoding would turn lone surrogates into U+FFFD
		}
		if v != nil {
			respelt, _ := json.MarshalIndent(v, "", "  ")
			if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: thread, ID: 1, State: respelt}, ev); err != nil {
				t.Errorf("%s: same content re-put as %s: %v, want no-op", doc, respelt, err)
			}
		}
		if err := s.PutCheckpoint(ctx, cp, ev); err != nil {
			t.Errorf("%s: identical re-put: %v, want no-op", doc, err)
		}
		other := store.Checkpoint{ThreadID: thread, ID: 1, State: []byte(`{"s":"a\u0000c"}`)}
		if err := s.PutCheckpoint(ctx, other, ev); !errors.Is(err, store.ErrConflict) {
			t.Errorf("%s: different content: %v, want ErrConflict", doc, err)
		}
	}
}

// TestGeneratedStringsRoundTrip sends many strings built from the
// characters the escaping cares about through the database.
func TestGeneratedStringsRoundTrip(t *testing.T) {
	s, _ := openFresh(t)
	ctx := context.Background()
	alphabet := []string{"\x00", "\uE000", "0", "s", "d800", "\\", "\"", "u", "é", "😀", "\n", "a"}
	rng := rand.New(rand.NewPCG(1, 2))
	var events []store.Event
	var want []map[string]string
	for i := range 300 {
		var k, v strings.Builder
		for range rng.IntN(12) {
			k.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		for range rng.IntN(12) {
			v.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		m := map[string]string{k.String(): v.String(), "i": fmt.Sprint(i)}
		doc, _ := json.Marshal(m)
		want = append(want, m)
		events = append(events, store.Event{Seq: i + 1, Type: "gen", Payload: doc})
	}
	if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "gen", ID: 1, State: events[0].Payload}, events); err != nil {
		t.Fatal(err)
	}
	got, err := s.Events(ctx, "gen", 1)
	if err != nil || len(got) != len(want) {
		t.Fatalf("Events: %d, %v", len(got), err)
	}
	for i, e := range got {
		var m map[string]string
		if err := json.Unmarshal(e.Payload, &m); err != nil || !reflect.DeepEqual(m, want[i]) {
			t.Errorf("event %d: sent %q, got %s (%v)", i+1, want[i], e.Payload, err)
		}
	}
	// The same events again are the same step: a no-op.
	if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "gen", ID: 1, State: events[0].Payload}, events); err != nil {
		t.Errorf("re-put: %v", err)
	}
	events[len(events)-1].Payload = []byte(`{"i":"changed\u0000"}`)
	if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "gen", ID: 1, State: events[0].Payload}, events); !errors.Is(err, store.ErrConflict) {
		t.Errorf("re-put with one event changed: %v, want ErrConflict", err)
	}
}

func TestBadDocumentsRefused(t *testing.T) {
	s, _ := openFresh(t)
	ctx := context.Background()
	if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{}`)}, nil); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		put  func() error
		want string
	}{
		{"state not UTF-8", func() error {
			return s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 2, ParentID: 1, State: []byte("{\"a\":\"\xff\"}")}, nil)
		}, "state is not valid UTF-8"},
		{"state not JSON", func() error {
			return s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 2, ParentID: 1, State: []byte(`{"a":`)}, nil)
		}, "put checkpoint 2 of thread \"t\": state is not valid JSON"},
		{"payload not JSON", func() error {
			return s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 2, ParentID: 1, State: []byte(`{}`)},
				[]store.Event{{Seq: 1, Type: "ok", Payload: []byte(`{}`)}, {Seq: 2, Type: "bad", Payload: []byte(`nope`)}})
		}, "payload of event 2 is not valid JSON"},
		{"writes not JSON", func() error {
			return s.PutWrites(ctx, store.TaskWrites{ThreadID: "t", CheckpointID: 1, TaskID: "x", Writes: []byte(`[1,`)})
		}, "is not valid JSON"},
		{"NUL in thread id", func() error {
			return s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "a\x00b", ID: 1, State: []byte(`{}`)}, nil)
		}, "NUL byte"},
		{"thread id not UTF-8", func() error {
			return s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "a\xffb", ID: 1, State: []byte(`{}`)}, nil)
		}, "not valid UTF-8"},
	}
	for _, c := range cases {
		err := c.put()
		var pgErr *pgconn.PgError
		switch {
		case err == nil:
			t.Errorf("%s: accepted", c.name)
		case !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "postgres store: "):
			t.Errorf("%s: %q, want 'postgres store: ...%s'", c.name, err, c.want)
		case strings.Contains(c.name, "UTF-8") || strings.Contains(c.name, "NUL"):
			if errors.As(err, &pgErr) {
				t.Errorf("%s: should be refused before reaching the server: %v", c.name, err)
			}
		}
	}
	// Nothing of a refused step was kept: checkpoint and events are one
	// transaction.
	if latest, err := s.Latest(ctx, "t"); err != nil || latest.ID != 1 {
		t.Errorf("Latest = %d, %v; want 1: a refused put left a checkpoint", latest.ID, err)
	}
	if es, err := s.Events(ctx, "t", 0); err != nil || len(es) != 0 {
		t.Errorf("Events = %v, %v; want none", es, err)
	}
}

func TestStrayMarkerInRowWrittenByHand(t *testing.T) {
	s, dbURL := openFresh(t)
	adminExec(t, dbURL, `insert into graph_checkpoints (thread_id, checkpoint_id, state) values ('h', 1, $1::jsonb)`, "{\"a\":\"\uE000x\"}")
	_, err := s.Get(context.Background(), "h", 1)
	if err == nil || !strings.Contains(err.Error(), "U+E000") {
		t.Fatalf("Get = %v, want an error about the stray marker", err)
	}
}

func TestLockedMessage(t *testing.T) {
	s, _ := openFresh(t)
	ctx := context.Background()
	release, err := s.Lock(ctx, "th-1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Lock(ctx, "th-1")
	if !errors.Is(err, store.ErrLocked) || err.Error() != `thread "th-1" is being run by another process` {
		t.Fatalf("second Lock = %v, want ErrLocked `thread \"th-1\" is being run by another process`", err)
	}
	if r2, err := s.Lock(ctx, "th-2"); err != nil {
		t.Fatalf("another thread: %v", err)
	} else if err := r2(); err != nil {
		t.Fatal(err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := release(); err != nil {
		t.Fatalf("second release: %v", err)
	}
	r3, err := s.Lock(ctx, "th-1")
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	// Close frees what is still held.
	s.Close()
	if err := r3(); err != nil {
		t.Fatalf("release after Close: %v", err)
	}
}

// advisoryHolders lists the backends holding advisory locks in dbURL's
// database.
func advisoryHolders(t *testing.T, dbURL string) []string {
	return query(t, dbURL, `select pid::text from pg_locks
where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())`)
}

func waitLock(t *testing.T, s *Store, thread string) func() error {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		release, err := s.Lock(context.Background(), thread)
		if err == nil {
			return release
		}
		if !errors.Is(err, store.ErrLocked) || time.Now().After(deadline) {
			t.Fatalf("Lock: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLockReleasedWhenConnectionKilled(t *testing.T) {
	a, dbURL := openFresh(t)
	b, err := Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	releaseA, err := a.Lock(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(context.Background(), "t"); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("b.Lock = %v, want ErrLocked", err)
	}
	if got := query(t, dbURL, `select application_name from pg_stat_activity where pid in (select pid from pg_locks where locktype = 'advisory'
  and database = (select oid from pg_database where datname = current_database()))`); len(got) != 1 || got[0] != "rewind" {
		t.Errorf("lock holder's application_name = %q, want rewind", got)
	}
	pids := advisoryHolders(t, dbURL)
	if len(pids) != 1 {
		t.Fatalf("advisory lock holders = %v, want one", pids)
	}
	adminExec(t, dbURL, `select pg_terminate_backend($1::int)`, pids[0])
	releaseB := waitLock(t, b, "t")
	if err := releaseA(); err == nil {
		t.Error("release of a lock whose connection was killed reported no error")
	}
	if err := releaseB(); err != nil {
		t.Fatal(err)
	}
	if got := advisoryHolders(t, dbURL); len(got) != 0 {
		t.Fatalf("after release, holders = %v", got)
	}
}

// TestLockReleasedWhenProcessKilled runs a child process that takes the
// lock and is then killed with SIGKILL.
func TestLockReleasedWhenProcessKilled(t *testing.T) {
	if url := os.Getenv("REWIND_LOCK_HELPER_URL"); url != "" {
		s, err := Open(context.Background(), url)
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(1)
		}
		if _, err := s.Lock(context.Background(), "killed"); err != nil {
			fmt.Println("lock:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	s, dbURL := openFresh(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockReleasedWhenProcessKilled$")
	cmd.Env = append(os.Environ(), "REWIND_LOCK_HELPER_URL="+dbURL)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q", line)
	}
	if _, err := s.Lock(context.Background(), "killed"); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("Lock while the helper holds it = %v, want ErrLocked", err)
	}
	cmd.Process.Kill() // SIGKILL: no cleanup runs in the child
	cmd.Wait()
	release := waitLock(t, s, "killed")
	if err := release(); err != nil {
		t.Fatal(err)
	}
}

func TestLockKeysDiffer(t *testing.T) {
	seen := map[int64]string{}
	for i := range 100000 {
		th := fmt.Sprint("thread-", i)
		k := lockKey(th)
		if prev, ok := seen[k]; ok {
			t.Fatalf("%s and %s share lock key %d", prev, th, k)
		}
		seen[k] = th
	}
}

// TestLockSessionSettings: the lock's connection is exempt from
// idle_session_timeout and probes a silent client.
func TestLockSessionSettings(t *testing.T) {
	s, dbURL := openFresh(t)
	// A server that drops idle sessions after 1 s would drop the lock.
	adminExec(t, dbURL, `do $$ begin execute format('alter database %I set idle_session_timeout = 1000', current_database()); end $$`)
	s.pool.Reset() // new connections pick up the database setting
	release, err := s.Lock(context.Background(), "idle")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	s.mu.Lock()
	var conn *pgx.Conn
	for c := range s.locks {
		conn = c
	}
	s.mu.Unlock()
	got := map[string]string{}
	for _, name := range []string{"idle_session_timeout", "tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count"} {
		var v string
		if err := conn.QueryRow(context.Background(), `select current_setting($1)`, name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		got[name] = v
	}
	want := map[string]string{"idle_session_timeout": "0", "tcp_keepalives_idle": "60", "tcp_keepalives_interval": "10", "tcp_keepalives_count": "6"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("lock session settings = %v, want %v", got, want)
	}
	time.Sleep(1500 * time.Millisecond)
	b, err := Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Lock(context.Background(), "idle"); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("after 1.5 s idle, another Lock = %v, want ErrLocked", err)
	}
}

// txKillCheckpoint is the checkpoint of the kill tests, with its events.
func txKillCheckpoint(id int64) (store.Checkpoint, []store.Event) {
	return store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, State: fmt.Appendf(nil, `{"step":%d,"pad":"%s"}`, id, strings.Repeat("x", 1000))},
		[]store.Event{{Type: "node.finished", Payload: fmt.Appendf(nil, `{"id":%d}`, id)}, {Type: "model.called"}}
}

// TestKillInsideTransaction kills a writer from PutCheckpoint's hook, after
// its rows are written and before COMMIT: the server rolls the
// transaction back, the earlier checkpoints are intact, and the same put
// then succeeds.
func TestKillInsideTransaction(t *testing.T) {
	if url := os.Getenv("REWIND_TXKILL_HELPER_URL"); url != "" {
		ctx := context.Background()
		s, err := Open(ctx, url)
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(1)
		}
		s.SetTxHook(func(stage string) {
			// Another session sees the writer's open transaction holding
			// both tables it inserted into.
			var locked int
			err := s.pool.QueryRow(ctx, `select count(distinct c.relname) from pg_locks l join pg_class c on c.oid = l.relation
where c.relname in ('graph_checkpoints', 'graph_events') and l.mode = 'RowExclusiveLock' and l.pid <> pg_backend_pid()`).Scan(&locked)
			fmt.Println("hook", stage, locked, err)
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		})
		cp, evs := txKillCheckpoint(3)
		err = s.PutCheckpoint(ctx, cp, evs)
		fmt.Println("returned", err)
		os.Exit(0)
	}
	s, dbURL := openFresh(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for id := int64(1); id <= 2; id++ {
		cp, evs := txKillCheckpoint(id)
		if err := s.PutCheckpoint(ctx, cp, evs); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillInsideTransaction$")
	cmd.Env = append(os.Environ(), "REWIND_TXKILL_HELPER_URL="+dbURL)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("helper ended with %v (said %q), want killed", err, line)
	}
	if line != "hook checkpoint-written 2 <nil>\n" {
		t.Fatalf("helper said %q, want it inside an open transaction that wrote both tables", line)
	}

	if _, err := s.Get(ctx, "t", 3); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the killed transaction's checkpoint is visible (Get: %v)", err)
	}
	if evs, err := s.Events(ctx, "t", 3); err != nil || len(evs) != 0 {
		t.Errorf("the killed transaction's events are visible: %v, %v", evs, err)
	}
	for id := int64(1); id <= 2; id++ {
		want, wantEvs := txKillCheckpoint(id)
		got, err := s.Get(ctx, "t", id)
		if err != nil || got.ParentID != want.ParentID || !decodesSame(t, got.State, want.State) {
			t.Fatalf("checkpoint %d after the kill: %v, parent %d", id, err, got.ParentID)
		}
		if evs, err := s.Events(ctx, "t", id); err != nil || len(evs) != len(wantEvs) {
			t.Fatalf("checkpoint %d has %d events after the kill, %v; want %d", id, len(evs), err, len(wantEvs))
		}
	}
	// The retry may wait for the server to notice the dead client and roll
	// its transaction back; then it goes in.
	cp, evs := txKillCheckpoint(3)
	if err := s.PutCheckpoint(ctx, cp, evs); err != nil {
		t.Fatalf("retry of the killed put: %v", err)
	}
	if got, err := s.Latest(ctx, "t"); err != nil || got.ID != 3 {
		t.Fatalf("Latest after the retry = %d, %v; want 3", got.ID, err)
	}
	if evs, err := s.Events(ctx, "t", 3); err != nil || len(evs) != 2 {
		t.Errorf("events of the retried put = %d, %v; want 2", len(evs), err)
	}
}

// TestStoppedWriterIsFenced is issue 5's drill on the store: a writer
// process is stopped with SIGSTOP, another takes the thread over (Fence)
// and goes on, and the first one, continued, has its late writes refused:
// the chain does not fork.
func TestStoppedWriterIsFenced(t *testing.T) {
	if url := os.Getenv("REWIND_FENCE_HELPER_URL"); url != "" {
		ctx := context.Background()
		s, err := Open(ctx, url)
		if err != nil {
			fmt.Println("open:", err)
			os.Exit(1)
		}
		epoch, err := s.Fence(ctx, "t")
		fmt.Println("epoch", epoch, err)
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			var what string
			var id int64
			fmt.Sscan(in.Text(), &what, &id)
			if what == "put" {
				cp, evs := txKillCheckpoint(id)
				cp.Epoch = epoch
				err = s.PutCheckpoint(ctx, cp, evs)
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
	s, dbURL := openFresh(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cp1, evs1 := txKillCheckpoint(1)
	if err := s.PutCheckpoint(ctx, cp1, evs1); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStoppedWriterIsFenced$")
	cmd.Env = append(os.Environ(), "REWIND_FENCE_HELPER_URL="+dbURL)
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
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewScanner(stdout)
	say := func(order, want string) {
		t.Helper()
		if order != "" {
			fmt.Fprintln(orders, order)
		}
		if !out.Scan() || out.Text() != want {
			t.Fatalf("worker said %q (%v), want %q", out.Text(), out.Err(), want)
		}
	}
	say("", "epoch 1 <nil>")
	say("put 2", "ok put 2")

	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, cmd.Process.Pid)
	fmt.Fprintln(orders, "put 3")
	fmt.Fprintln(orders, "writes 2")
	fmt.Fprintln(orders, "put 4")

	epoch, err := s.Fence(ctx, "t")
	if err != nil || epoch != 2 {
		t.Fatalf("takeover Fence = %d, %v; want 2", epoch, err)
	}
	mine := store.Checkpoint{ThreadID: "t", ID: 3, ParentID: 2, State: []byte(`{"by": "the new writer"}`), Epoch: epoch}
	if err := s.PutCheckpoint(ctx, mine, nil); err != nil {
		t.Fatalf("the new writer's put: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	say("", "fenced put 3")
	say("", "fenced writes 2")
	say("", "fenced put 4")

	h, err := s.History(ctx, "t", 0, 0)
	if err != nil || len(h) != 3 || h[0].ID != 3 || h[0].ParentID != 2 || string(h[0].State) != string(mine.State) {
		t.Fatalf("history after the late writes = %d checkpoints, %v; want 3 (the new writer's) ← 2 ← 1", len(h), err)
	}
	if ws, err := s.Writes(ctx, "t", 2); err != nil || len(ws) != 0 {
		t.Errorf("the stopped writer's late writes were stored: %v, %v", ws, err)
	}
}

// TestStoppedWriterIsFencedAcrossDelete is issue 11's first case on the
// store: a writer process is stopped with SIGSTOP, the thread is deleted
// and a new writer starts it again from 1; the first writer, continued,
// has every late write refused, though its next checkpoint would fit on
// top of the new writer's chain. The writer is TestStoppedWriterIsFenced's.
func TestStoppedWriterIsFencedAcrossDelete(t *testing.T) {
	s, dbURL := openFresh(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cp1, evs1 := txKillCheckpoint(1)
	if err := s.PutCheckpoint(ctx, cp1, evs1); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStoppedWriterIsFenced$")
	cmd.Env = append(os.Environ(), "REWIND_FENCE_HELPER_URL="+dbURL)
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
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewScanner(stdout)
	say := func(order, want string) {
		t.Helper()
		if order != "" {
			fmt.Fprintln(orders, order)
		}
		if !out.Scan() || out.Text() != want {
			t.Fatalf("worker said %q (%v), want %q", out.Text(), out.Err(), want)
		}
	}
	say("", "epoch 1 <nil>")
	say("put 2", "ok put 2")

	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, cmd.Process.Pid)
	late := []string{"put 3", "writes 2", "writes 1", "put 1", "put 4"}
	for _, order := range late {
		fmt.Fprintln(orders, order)
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
		cp := store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, State: fmt.Appendf(nil, `{"by": "the new writer", "id": %d}`, id), Epoch: epoch}
		if err := s.PutCheckpoint(ctx, cp, nil); err != nil {
			t.Fatalf("the new writer's put: %v", err)
		}
		mine = append(mine, cp)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for _, order := range late {
		say("", "fenced "+order)
	}

	h, err := s.History(ctx, "t", 0, 0)
	if err != nil || len(h) != 2 || h[0].ID != 2 || h[1].ID != 1 {
		t.Fatalf("history after the late writes = %d checkpoints, %v; want the new writer's 2 ← 1", len(h), err)
	}
	for _, cp := range mine {
		if got, err := s.Get(ctx, "t", cp.ID); err != nil || string(got.State) != string(cp.State) {
			t.Errorf("checkpoint %d = %s, %v; want the new writer's", cp.ID, got.State, err)
		}
		if ws, err := s.Writes(ctx, "t", cp.ID); err != nil || len(ws) != 0 {
			t.Errorf("the stopped writer's late writes were stored at %d: %v, %v", cp.ID, ws, err)
		}
	}
}

// waitStopped waits until process pid is stopped (state T in /proc/PID/stat).
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		// The state follows the command name, which is in parentheses.
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) && b[i+2] == 'T' {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never stopped: %s", pid, b)
		}
		time.Sleep(time.Millisecond)
	}
}
