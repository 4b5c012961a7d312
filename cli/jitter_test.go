package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
	"rewind/store/memory"
	"rewind/store/sqlite"
)

const jitterSentence = "My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel now, and can I get a refund if it is lost?"

// executorWaits is what each executor of the first fan-out waits with the
// mock's latency, jitter and seed, all its calls (a tool round and the
// finding) together, sorted (a dry run with no waiting).
func executorWaits(t *testing.T, latency, jitter time.Duration, seed uint64) []time.Duration {
	t.Helper()
	twin := ticket.NewMock()
	twin.Latency, twin.Jitter, twin.Seed = latency, jitter, seed
	rec := &waitsOf{Model: ticket.NewMock(), twin: twin}
	e, err := engine.New(memory.New(), ticket.NewGraph(), rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background(), "dry", ticket.Input(jitterSentence), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	for _, w := range rec.waits {
		waits = append(waits, w)
	}
	slices.Sort(waits)
	return waits
}

type waitsOf struct {
	model.Model
	twin     *model.Mock
	mu       sync.Mutex
	reviewed bool
	waits    map[string]time.Duration // by the executor's task
}

func (w *waitsOf) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	w.mu.Lock()
	if req.Role == model.RoleCritic {
		w.reviewed = true
	}
	if req.Role == model.RoleExecutor && !w.reviewed {
		if w.waits == nil {
			w.waits = map[string]time.Duration{}
		}
		w.waits[req.Prompt()] += w.twin.Wait(req)
	}
	w.mu.Unlock()
	return w.Model.Complete(ctx, req)
}

// A hand kill while the executors run: with --mock-jitter they finish
// apart, so a worker SIGKILLed just after the first one stored its writes
// leaves a resume that reuses that one and redispatches the others — the
// mix a class should see, in a real process, not an armed kill point.
func TestJitteredFanOutKilledByHandResumesAMix(t *testing.T) {
	t.Parallel()
	const latency, jitter = 50 * time.Millisecond, 3 * time.Second
	seed := uint64(0)
	for s := uint64(1); s <= 50 && seed == 0; s++ {
		// The first executor must finish well before the second: the test
		// needs time to see its writes and kill.
		if w := executorWaits(t, latency, jitter, s); len(w) >= 3 && w[1]-w[0] > 800*time.Millisecond {
			seed = s
		}
	}
	if seed == 0 {
		t.Fatal("no seed in 1..50 spreads the fan-out: the jitter does not work")
	}
	path := filepath.Join(t.TempDir(), "j.db")
	db := "sqlite:" + path
	cmd := exec.Command(binary, "run", "--store", db, "--thread", "j", "--input", jitterSentence,
		"--mock-latency", latency.String(), "--mock-jitter", jitter.String(), "--mock-seed", strconv.FormatUint(seed, 10))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Watch the store from here, as a person watches the screen, and kill
	// once one executor's writes are stored.
	deadline := time.Now().Add(30 * time.Second)
	killed := false
	for !killed && time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("the run ended before its first executor stored anything: %v: %s", err, stderr.String())
		default:
		}
		if stored := storedWrites(t, path); stored > 0 {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-done
			killed = true
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !killed {
		t.Fatal("no executor stored its writes in 30 s")
	}
	r := rewind(t, nil, "resume", "--store", db, "j", "--plan", "--json")
	var plan engine.ResumePlan
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &plan) != nil {
		t.Fatalf("resume --plan: %d %s %s", r.code, r.stdout, r.stderr)
	}
	reused, redispatched := 0, 0
	for _, task := range plan.Tasks {
		if task.Node != ticket.NodeExecutor {
			t.Fatalf("the killed superstep's task %s is %s, want an executor", task.ID, task.Node)
		}
		if task.Stored {
			reused++
		} else {
			redispatched++
		}
	}
	if reused == 0 || redispatched == 0 {
		t.Fatalf("seed %d: a kill after the first executor left %d reused and %d redispatched, want a mix", seed, reused, redispatched)
	}
	if r := rewind(t, nil, "resume", "--store", db, "j"); r.code != 0 {
		t.Fatalf("resume: %d %s %s", r.code, r.stdout, r.stderr)
	}
	t.Logf("seed %d: %d reused, %d redispatched", seed, reused, redispatched)
}

// storedWrites counts the task writes stored for the thread's pending
// superstep, read through a second handle while the worker runs.
func storedWrites(t *testing.T, path string) int {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return 0 // the worker has not made the file yet
	}
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return 0
	}
	defer st.Close()
	ws, err := st.Writes(context.Background(), "j", 0)
	if err != nil {
		return 0
	}
	return len(ws)
}
