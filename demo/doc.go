// Package demo holds rewind's lessons: short, offline scripts a teacher
// opens in front of a class (`rewind demo LESSON`), each on a fresh store of
// its own. A lesson is a script (what to press, what to look at, what it
// proves) and a headless run that prepares the lesson's threads and reaches
// a one-line verdict from what the engine stored, so every lesson is also a
// test. Lessons compose what the engine already answers (selftest's
// checks, the crash drills, the storage bench, the fidelity check); the
// package imports nothing from tui.
package demo

// README's pictures: `go generate ./demo` runs pictures.sh (tmux, freeze).
//
//go:generate ./pictures.sh
