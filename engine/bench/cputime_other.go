//go:build !unix

package bench

// cpuTime is not measured here (see cputime_unix.go).
func cpuTime() int64 { return 0 }
