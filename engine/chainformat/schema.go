package chainformat

import (
	"encoding/json"
	"fmt"

	"rewind/engine/internal/userpanic"
)

// Schema is what the stored format knows of a graph: its channels (whose
// reducers replay stored writes), the transcript channel, the keyed and
// object channels (stored as patches), the schema version it writes and
// the migrations to it. The engine's Graph holds one and declares through
// it; the codec reads nothing else of the graph.
type Schema struct {
	// SchemaVersion is the checkpoint document version the graph writes.
	SchemaVersion int
	// Migrations[n] upgrades a version-n document to n+1 (the graph's map).
	Migrations map[int]Migration

	channels map[string]channelSpec
	chanList []string
	// transcript is the channel whose items are stored once each.
	transcript, transcriptIndex string
	// keyed maps channels of keyed items to their key field.
	keyed map[string]string
	// objects are LastValue channels of objects, stored as field patches.
	objects map[string]bool
	// baseEvery and replayAll, set by Hooks.Tune, are the package's knobs
	// for this schema alone, so that tests of other intervals run at once.
	baseEvery int
	replayAll bool
}

// NewSchema is an empty schema of version; migrations is the graph's map,
// shared: a migration added to it later counts.
func NewSchema(version int, migrations map[int]Migration) *Schema {
	return &Schema{SchemaVersion: version, Migrations: migrations, channels: map[string]channelSpec{}}
}

// Channel declares a state channel with its reducer and initial value.
func (g *Schema) Channel(name string, r Reducer, initial any) error {
	if _, dup := g.channels[name]; dup {
		return fmt.Errorf("channel %q declared twice", name)
	}
	b, err := initialJSON(initial)
	if err != nil {
		return fmt.Errorf("channel %q: initial value: %v", name, err)
	}
	g.channels[name] = channelSpec{reducer: r, initial: b, kind: kindOf(r)}
	g.chanList = append(g.chanList, name)
	return nil
}

// HasChannel reports whether channel is declared.
func (g *Schema) HasChannel(channel string) bool { _, ok := g.channels[channel]; return ok }

// Transcript declares the channel whose items are stored once each
// (Graph.Transcript); indexField numbers them.
func (g *Schema) Transcript(channel, indexField string) error {
	if _, ok := g.channels[channel]; !ok {
		return fmt.Errorf("transcript channel %q is not declared", channel)
	}
	g.transcript, g.transcriptIndex = channel, indexField
	return nil
}

// TranscriptChannel is the transcript's channel ("" for none).
func (g *Schema) TranscriptChannel() string { return g.transcript }

// Keyed declares a channel of items keyed by field (Graph.Keyed).
func (g *Schema) Keyed(channel, field string) error {
	if _, ok := g.channels[channel]; !ok {
		return fmt.Errorf("keyed channel %q is not declared", channel)
	}
	if g.keyed == nil {
		g.keyed = map[string]string{}
	}
	g.keyed[channel] = field
	return nil
}

// Object declares a LastValue channel of objects (Graph.Object).
func (g *Schema) Object(channel string) error {
	if _, ok := g.channels[channel]; !ok {
		return fmt.Errorf("object channel %q is not declared", channel)
	}
	if g.objects == nil {
		g.objects = map[string]bool{}
	}
	g.objects[channel] = true
	return nil
}

// Initial is the state of a brand-new thread.
func (g *Schema) Initial() Values {
	v := Values{}
	for _, name := range g.chanList {
		v[name] = append(json.RawMessage(nil), g.channels[name].initial...)
	}
	return v
}

// PanicError is a reducer (or, in the engine, a node or router) that
// panicked: the graph's author's code, recovered into an error.
type PanicError = userpanic.Error

// Apply folds writes into a copy of v, channel by channel in write order.
// Values are never mutated in place (reducers return new bytes), so the
// copy shares the channels it does not write.
func (g *Schema) Apply(v Values, writes []Write) (Values, error) {
	out := make(Values, len(v))
	for k, b := range v {
		out[k] = b
	}
	for _, w := range writes {
		spec, ok := g.channels[w.Channel]
		if !ok {
			return nil, fmt.Errorf("write to unknown channel %q", w.Channel)
		}
		if len(w.Value) == 0 {
			return nil, fmt.Errorf("empty write to channel %q", w.Channel)
		}
		nv, err := userpanic.Call2("reducer", spec.reducer, out[w.Channel], w.Value)
		if err != nil {
			return nil, fmt.Errorf("channel %q: %w", w.Channel, err)
		}
		out[w.Channel] = nv
	}
	return out, nil
}

// applyTo folds one write into v itself (a replay's own values).
func (g *Schema) applyTo(v Values, channel string, write json.RawMessage) error {
	spec, ok := g.channels[channel]
	if !ok {
		return fmt.Errorf("write to unknown channel %q", channel)
	}
	if len(write) == 0 {
		return fmt.Errorf("empty write to channel %q", channel)
	}
	nv, err := userpanic.Call2("reducer", spec.reducer, v[channel], write)
	if err != nil {
		return fmt.Errorf("channel %q: %w", channel, err)
	}
	v[channel] = nv
	return nil
}
