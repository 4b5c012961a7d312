package engine

import "rewind/engine/chainformat"

// A checkpoint, its writes and its events are the stored format's types
// (engine/chainformat): the engine runs the graph over them, the format
// package stores and reads them. They keep their names here, so a caller
// of the engine never imports the format.
type (
	// PanicError is a function of the graph's that panicked: a node, router,
	// reducer, Input, migration or hook (OnResume, OnBuild, …).
	PanicError = chainformat.PanicError
	// Checkpoint is a decoded, migrated checkpoint.
	Checkpoint = chainformat.Checkpoint
	// Metadata records how a checkpoint came to be.
	Metadata = chainformat.Metadata
	// Task is a node plus its arguments, not yet run at a checkpoint.
	Task = chainformat.Task
	// Interrupt says why a run stopped with tasks still pending.
	Interrupt = chainformat.Interrupt
	// Values is a thread's state: channel name → JSON value.
	Values = chainformat.Values
	// Write is one channel update.
	Write = chainformat.Write
	// WriteGroup is the writes one task (or the input) applied to make a
	// checkpoint.
	WriteGroup = chainformat.WriteGroup
	// Reducer folds a write into a channel's value.
	Reducer = chainformat.Reducer
	// Migration turns a checkpoint document of version N into version N+1.
	Migration = chainformat.Migration
	// RoleUsage is the model calls of one role and their tokens.
	RoleUsage = chainformat.RoleUsage
	// Sums are the running totals a turn's first checkpoint keeps
	// (Metadata.Sums): what was spent before it.
	Sums = chainformat.Sums
	// RunMark names the run that wrote a checkpoint (Metadata.Run).
	RunMark = chainformat.RunMark
)

// Checkpoint sources.
const (
	SourceInput      = chainformat.SourceInput
	SourceLoop       = chainformat.SourceLoop
	SourceUpdate     = chainformat.SourceUpdate
	SourceFork       = chainformat.SourceFork
	SourceUnreadable = chainformat.SourceUnreadable
)

// RequestHashLen is how many hex digits of a request's hash a stored call
// keeps.
const RequestHashLen = chainformat.RequestHashLen

// Read errors of a stored checkpoint.
var (
	// ErrNewerSchema: written by a newer rewind.
	ErrNewerSchema = chainformat.ErrNewerSchema
	// ErrUnknownSchema: a version with no migration path.
	ErrUnknownSchema = chainformat.ErrUnknownSchema
	// ErrCorrupt: the stored document does not decode.
	ErrCorrupt = chainformat.ErrCorrupt
)

// The channel reducers and writes. A reducer's behaviour is part of the
// stored schema (a replay runs it over stored writes), so they live with
// the format; variables, not wrappers, so the format still tells its own
// reducers by their code (chainformat's resets).
var (
	Put           = chainformat.Put
	Replace       = chainformat.Replace
	LastValue     = chainformat.LastValue
	IndexedAppend = chainformat.IndexedAppend
	MergeByID     = chainformat.MergeByID
	MergeMap      = chainformat.MergeMap
	TurnMap       = chainformat.TurnMap
	Counter       = chainformat.Counter
)
