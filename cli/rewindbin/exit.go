package rewindbin

import (
	"os"
	"syscall"
	"testing"
)

// Main is a package's TestMain: it runs the tests and ends the process
// with their code (Exit).
func Main(m *testing.M) { Exit(m.Run()) }

// Exit ends a test process with code, as os.Exit does, but a binary built
// with -race that passes ends at once. The race runtime otherwise sleeps a
// second as a passing process exits (GORACE's atexit_sleep_ms), so that
// goroutines still running may report a race: once for every test binary
// of `go test -race ./...` and every raced child that ends well.
// m.Run has already failed the run on every race it saw ("race detected
// during execution of test" or "outside of test execution"); a failing
// code goes through os.Exit as before.
func Exit(code int) {
	if code == 0 && raced {
		syscall.Exit(0)
	}
	os.Exit(code)
}
