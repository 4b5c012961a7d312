package engine

import "rewind/engine/internal/valuediff"

// ChannelDiff is how one channel changed between two checkpoints
// (engine/internal/valuediff).
type ChannelDiff = valuediff.Channel

// Diff compares two checkpoints' channel values (any two: a parent and its
// child, or checkpoints of different branches): valuediff.Channels.
func Diff(parent, cur Values) []ChannelDiff { return valuediff.Channels(parent, cur) }
