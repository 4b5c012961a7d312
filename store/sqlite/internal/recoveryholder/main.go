// Command recoveryholder is the other process of store/sqlite's
// TestFirstWriteWaitsForARecovery: it does what SQLite's WAL recovery does
// to the -shm file REWIND_RECOVERY_SHM names, for 300 ms: takes every lock
// byte (120 to 127) and leaves the index header's two copies differing,
// as a recovery rewriting it would. A reader then gets
// SQLITE_BUSY_RECOVERY; once the locks go, the next reader recovers. It
// prints "held" once it holds them. Built without -race (rewindbin.Tool):
// a raced copy of the test binary was most of the test's CPU.
package main

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

func main() {
	if err := hold(os.Getenv("REWIND_RECOVERY_SHM")); err != nil {
		fmt.Fprintln(os.Stderr, "recoveryholder:", err)
		os.Exit(1)
	}
}

func hold(shm string) error {
	if shm == "" {
		return fmt.Errorf("REWIND_RECOVERY_SHM names no -shm file; run it through TestFirstWriteWaitsForARecovery")
	}
	f, err := os.OpenFile(shm, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open the WAL index: %w", err)
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 120, Len: 8}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		return fmt.Errorf("lock the WAL index's lock bytes: %w", err)
	}
	change := make([]byte, 4) // the first copy's iChange
	if _, err := f.ReadAt(change, 8); err != nil {
		return fmt.Errorf("read the index header: %w", err)
	}
	change[0]++
	if _, err := f.WriteAt(change, 8); err != nil {
		return fmt.Errorf("write the index header: %w", err)
	}
	fmt.Println("held")
	time.Sleep(300 * time.Millisecond)
	return nil
}
