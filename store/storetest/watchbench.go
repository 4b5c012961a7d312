package storetest

import (
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"

	"rewind/store"
)

// benchWatch measures a watcher (store.Watcher): WatchWake the time from a
// put's start (its commit is inside it) to the waiter's wake-up, at a
// random moment each, reported as its median (median-ms; ns/op is the
// mean); WatchIdle what a
// watcher that nothing wakes costs this process in CPU over 10 s
// (cpu-ms/10s; run it with -benchtime 1x).
func benchWatch(b *testing.B, open func(b *testing.B) store.Store) {
	b.Run("WatchWake", func(b *testing.B) {
		s := open(b)
		w, ok := s.(store.Watcher)
		if !ok {
			b.Skip("not a store.Watcher")
		}
		c, err := w.Watch(b.Context(), "bench")
		if err != nil {
			b.Fatal(err)
		}
		var lat []time.Duration
		var id int64
		for b.Loop() {
			// Commits come at any moment of a poller's period, not just
			// after a wake-up as in a tight loop.
			b.StopTimer()
			time.Sleep(time.Duration(rand.Int64N(int64(250 * time.Millisecond))))
			b.StartTimer()
			id++
			start := time.Now() // the commit is inside the put: an upper bound
			benchPut(b, s, "bench", id)
			select {
			case <-c:
			case <-time.After(wakeGuard):
				b.Fatal("the watcher never woke")
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
	})
	b.Run("WatchIdle", func(b *testing.B) {
		s := open(b)
		w, ok := s.(store.Watcher)
		if !ok {
			b.Skip("not a store.Watcher")
		}
		if _, err := w.Watch(b.Context(), "bench"); err != nil {
			b.Fatal(err)
		}
		var cpu time.Duration
		for b.Loop() {
			before := cpuTime(b)
			time.Sleep(10 * time.Second)
			cpu += cpuTime(b) - before
		}
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/10s")
	})
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
