package engine_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store"
)

// A writer taken over while its executors run side by side hears about it
// once: every executor's stored writes are refused, and the run stops with
// one fencing error on one line, not one line per executor, and without
// advising a resume (the new writer owns the thread now).
func TestFencedFanOutReportsOnce(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			ctx := t.Context()
			st, _ := sc.open(t)
			e, err := ticket.NewEngine(st, ticket.NewMock())
			if err != nil {
				t.Fatal(err)
			}
			pausedThread(t, e, "t", engine.RunConfig{})
			latest, err := e.Latest(ctx, "t")
			if err != nil {
				t.Fatal(err)
			}
			if len(latest.Tasks) < 2 {
				t.Fatalf("want a fan-out, the thread has %d pending task(s)", len(latest.Tasks))
			}
			// Every executor waits before its model call until all have
			// started; then another writer takes the thread over, and
			// they carry on to store their writes under the old epoch.
			var mu sync.Mutex
			arrived := map[string]bool{}
			all := make(chan struct{})
			hook := func(point engine.HookPoint, info engine.HookInfo) {
				if point != engine.HookBeforeModelCall || info.Task == nil {
					return
				}
				mu.Lock()
				if !arrived[info.Task.ID] {
					arrived[info.Task.ID] = true
					if len(arrived) == len(latest.Tasks) {
						if _, err := st.Fence(ctx, "t"); err != nil {
							t.Error(err)
						}
						close(all)
					}
				}
				mu.Unlock()
				<-all
			}
			_, err = e.Resume(ctx, "t", engine.RunConfig{Hook: hook})
			if !errors.Is(err, store.ErrFenced) {
				t.Fatalf("resume taken over mid fan-out = %v, want ErrFenced", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || strings.Count(msg, "taken over") != 1 || strings.Contains(msg, "rewind resume") {
				t.Fatalf("a fenced fan-out reports %q; want one line, saying once that the thread was taken over, advising no resume", msg)
			}
		})
	}
}
