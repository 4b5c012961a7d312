//go:build race

package check

import (
	"runtime"
	"unsafe"
)

// raceRead tells the race detector that doc is read, whole, at once: the
// scanners below are //go:norace, and per byte the detector cost them
// several times the scan itself (a row's documents are checked on every
// put: most of a store-heavy test's CPU under -race).
func raceRead(doc []byte) {
	if len(doc) > 0 {
		runtime.RaceReadRange(unsafe.Pointer(unsafe.SliceData(doc)), len(doc))
	}
}
