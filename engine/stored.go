package engine

import "rewind/store"

// Stored is told each row the engine's runs stored, once the store took
// it, in the order they were stored (task writes come from the tasks'
// goroutines: an implementation locks). A measurement sees with it what
// a turn stored (the bench's floor: the same rows written by a bare
// program); the rows are the store's to keep: copy what is kept.
type Stored interface {
	CheckpointStored(cp store.Checkpoint, events []store.Event)
	WritesStored(w store.TaskWrites)
}

// WithStored has the engine tell s every row its runs store.
func WithStored(s Stored) Option { return func(e *Engine) { e.stored = s } }

// tellStored tells WithStored's s of a checkpoint row stored.
func (e *Engine) tellStored(cp store.Checkpoint, events []store.Event) {
	if e.stored != nil {
		e.stored.CheckpointStored(cp, events)
	}
}
