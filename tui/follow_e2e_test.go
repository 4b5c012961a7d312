package tui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"rewind/store/backend/backendtest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFollowInTmux: the TUI is open on a thread in tmux; `rewind run` in
// another process adds a turn; without a key press, the status bar names
// the writer while it runs and the timeline grows to the new head. With
// REWIND_TEST_POSTGRES set it runs on PostgreSQL too (LISTEN/NOTIFY);
// without, that case skips.
func TestFollowInTmux(t *testing.T) {
	t.Parallel()
	tmuxBin := lookTmux(t)
	bin := rewindBinary(t)
	backendtest.EachShared(t, func(t *testing.T, b backendtest.Backend) {
		followInTmux(t, tmuxBin, bin, b.Spec(t, "follow"))
	})
}

func followInTmux(t *testing.T, tmuxBin, bin, storeSpec string) {
	dir := t.TempDir()
	thread := fmt.Sprintf("follow-%d-%d", os.Getpid(), time.Now().UnixNano())
	rewind := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
		return cmd
	}
	if out, err := rewind("run", "--store", storeSpec, "--thread", thread, "--input", firstInput).CombinedOutput(); err != nil {
		t.Fatalf("rewind run: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = rewind("rm", "--store", storeSpec, thread).Run() })

	socket := fmt.Sprintf("rewind-follow-%d", os.Getpid())
	shell := fmt.Sprintf("env XDG_STATE_HOME=%s XDG_CONFIG_HOME=%s TERM=tmux-256color %s tui --store %s %s 2>%s",
		filepath.Join(dir, "state"), filepath.Join(dir, "config"), bin, storeSpec, thread, filepath.Join(dir, "stderr"))
	term := newTmux(t, tmuxBin, socket, "follow", filepath.Join(dir, "stderr"))
	term.start(120, 40, shell)
	waitFor := term.waitFor
	waitFor("the thread at its head, followed", "at @8 8/8", "following")

	// Another process runs a turn, slowly enough to be seen running.
	run := rewind("run", "--store", storeSpec, "--thread", thread, "--input", "And when will the refund arrive?", "--mock-latency", "300ms")
	out := &strings.Builder{}
	run.Stdout, run.Stderr = out, out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Process.Kill() })
	waitFor("the writer named while it runs", "● live: written by pid "+strconv.Itoa(run.Process.Pid))
	if err := run.Wait(); err != nil {
		t.Fatalf("the other process's run: %v\n%s", err, out)
	}
	// No key was pressed: the timeline followed to the new head.
	// The second turn's 8 checkpoints follow the first's.
	s := waitFor("the new turn on the timeline, the cursor at its head", "following", "at @16 16/16", "@9   › And when will")
	if strings.Contains(s, "● live") {
		t.Fatalf("the writer is still shown after its run ended:\n%s", s)
	}

	// Another process deletes the thread: the TUI says so.
	if out, err := rewind("rm", "--store", storeSpec, thread).CombinedOutput(); err != nil {
		t.Fatalf("rewind rm: %v\n%s", err, out)
	}
	s = waitFor("the thread said to be gone", "deleted elsewhere")
	if strings.Contains(s, "following") {
		t.Fatalf("a deleted thread is still shown as followed:\n%s", s)
	}
	// The id written again: the new thread, from scratch (its 8
	// checkpoints, not the old 16).
	if out, err := rewind("run", "--store", storeSpec, "--thread", thread, "--input", "A new customer: where is SO20261111?").CombinedOutput(); err != nil {
		t.Fatalf("rewind run on the reused id: %v\n%s", err, out)
	}
	s = waitFor("the new thread opened from scratch", "following", "at @8 8/8", "A new customer")
	if strings.Contains(s, "And when will") || strings.Contains(s, "16/16") {
		t.Fatalf("the old thread shows after its id was written again:\n%s", s)
	}
}
