// Package userpanic turns a panic in code a graph's author wrote (a node,
// a router, a reducer) into an error: the engine runs that code inside its
// own process (a CLI run, a worker, the TUI), and one buggy node must fail
// its task, not take the process down with the terminal left raw.
package userpanic

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
)

// maxFrames is how many of the user's frames an error shows: where the
// panic happened and what called it, on one line.
const maxFrames = 3

// Error is a panic in the user's code, recovered.
type Error struct {
	// What is the code that panicked ("node", "route after a", "reducer").
	What string
	// Value is what was passed to panic.
	Value any
	// Frames are the user's frames, innermost first ("pkg.fn (file.go:12)").
	Frames []string
}

func (e *Error) Error() string {
	at := ""
	if len(e.Frames) > 0 {
		at = " at " + strings.Join(e.Frames, " < ")
	}
	return fmt.Sprintf("panicked: %v%s; fix the %s", e.Value, at, e.What)
}

// Call1 is fn(a), with a panic in fn returned as an *Error.
func Call1[A, R any](what string, fn func(A) (R, error), a A) (r R, err error) {
	defer recovered(what, &err)
	return fn(a)
}

// Call2 is fn(a, b), with a panic in fn returned as an *Error.
func Call2[A, B, R any](what string, fn func(A, B) (R, error), a A, b B) (r R, err error) {
	defer recovered(what, &err)
	return fn(a, b)
}

// Do is fn(), with a panic in it returned as an *Error: a hook the
// engine calls through a closure of its own (a check, a migration), whose
// arguments the closure names.
func Do(what string, fn func() error) (err error) {
	defer recovered(what, &err)
	return fn()
}

// Run is Do for a hook that returns a value (a recheck, cancel writes).
func Run[R any](what string, fn func() (R, error)) (r R, err error) {
	defer recovered(what, &err)
	return fn()
}

// Guard2 is fn with a panic in it returned as an *Error: what a graph
// keeps of a function its author declared. A nil fn (Node("a", nil)) is
// a function that says so, not a nil pointer's panic.
func Guard2[A, B, R any, F ~func(A, B) (R, error)](what string, fn F) F {
	if fn == nil {
		return func(A, B) (r R, err error) {
			return r, fmt.Errorf("the %s has no function: its declaration passed nil; give it one", what)
		}
	}
	return func(a A, b B) (R, error) { return Call2(what, fn, a, b) }
}

// GuardOpt is Guard2 for a function the author may leave out (a
// graph's Input): nil stays nil, so declaring none still reads as none.
func GuardOpt[A, B, R any, F ~func(A, B) (R, error)](what string, fn F) F {
	if fn == nil {
		return nil
	}
	return Guard2(what, fn)
}

// recovered is deferred by the calls above: recover works only in the
// function a defer names.
func recovered(what string, err *error) {
	v := recover()
	if v == nil {
		return
	}
	*err = &Error{What: what, Value: v, Frames: userFrames()}
}

// userFrames are the frames between the panic and this package's call:
// the runtime's own (the panic machinery, a nil map's assignment) left out.
func userFrames() []string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs) // skip Callers, userFrames, recovered
	frames := runtime.CallersFrames(pcs[:n])
	var out, fns []string
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, thisPackage) {
			break // the Call that ran the user's code: the engine's frames follow
		}
		if !strings.HasPrefix(f.Function, "runtime.") && f.Function != "" {
			out = append(out, fmt.Sprintf("%s (%s:%d)", shortFunc(f.Function), filepath.Base(f.File), f.Line))
			fns = append(fns, f.Function)
		}
		if !more {
			break
		}
	}
	// The closure Do or Run was given is the engine's, not the user's.
	for len(fns) > 0 && isEngine(fns[len(fns)-1]) {
		out, fns = out[:len(out)-1], fns[:len(fns)-1]
	}
	return out[:min(len(out), maxFrames)]
}

// isEngine is whether fn is the engine's own code (package engine or its
// stored format), which calls the user's hooks.
func isEngine(fn string) bool {
	return strings.HasPrefix(fn, "rewind/engine.") || strings.HasPrefix(fn, "rewind/engine/chainformat.")
}

const thisPackage = "rewind/engine/internal/userpanic."

// shortFunc is a function's name without its import path's directories.
func shortFunc(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		return name[i+1:]
	}
	return name
}
