//go:build unix

package bench

import "syscall"

// cpuTime is the CPU time this process used so far, in nanoseconds: on a
// shared machine it varies less than the time on the clock (the
// PostgreSQL server's time is not in it).
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
