package postgres

import (
	"context"
	"testing"
	"time"
)

// Issue 38: a flood of notifications costs a watcher the reading of each
// one unless it stops listening for a while; the commit it waits for, sent
// in the flood (so possibly while it is not listening), must still wake it.
func TestWatchSitsOutANotifyFlood(t *testing.T) {
	t.Parallel()
	s, dbURL := openFresh(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := s.Watch(ctx, "T")
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	// One transaction: delivered together at commit, 5,000 for other
	// threads and then the watched one's.
	adminExec(t, dbURL, `select count(pg_notify('`+notifyChannel+`', 'other-' || i)) from generate_series(1, 5000) i`+
		` union all select count(pg_notify('`+notifyChannel+`', 'T'))`)
	select {
	case <-c:
	case <-ctx.Done():
		t.Fatal("the watched thread's notification, sent after a flood, never woke the watcher")
	}
	if got := s.floodPauses.Load(); got == 0 {
		t.Fatalf("the watcher read a flood of 5,000 notifications without stopping to listen once (want ≥ 1 pause)")
	}
}

// A flood that goes on lengthens the pauses (each ends in a wake-up, a
// read of the thread for the waiter); a calm second starts them over.
func TestFloodPausesGrowWhileTheFloodLasts(t *testing.T) {
	t.Parallel()
	var f floodMeter
	now := time.Unix(0, 0)
	var got []time.Duration
	for range 5 {
		got = append(got, f.nextPause(now))
		now = now.Add(f.pause)
		f.lastPause = now
		now = now.Add(100 * time.Millisecond) // the next burst
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 2 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pauses under a lasting flood = %v, want %v", got, want)
		}
	}
	if p := f.nextPause(now.Add(2 * time.Second)); p != floodPause {
		t.Fatalf("after a calm 2 s the pause is %v, want %v again", p, floodPause)
	}
}
