// Package app opens rewind: the store the spec names, the model the
// provider flags choose, and the engine of the ticket graph on both. Every
// CLI command and the TUI (through `rewind tui`) get their engine here, so
// they open stores and build models the same way; the TUI itself imports no
// store backend.
package app

import (
	"context"
	"errors"
	"fmt"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/seal"
	"rewind/engine/ticket"
)

// Config is what the flags say about the app.
type Config struct {
	// Store is --store; empty falls back as ResolveStore says.
	Store string
	// Model is the model flags of a command that runs the graph. Nil for
	// one that only reads, deletes or discards: it builds no model (so a
	// $REWIND_PROVIDER set up for runs is not needed to read a log), and a
	// model call fails.
	Model *ModelFlags
	// ReadOnly: a command that only reads. The store opens without
	// creating or migrating anything (Store.OpenRead).
	ReadOnly bool
	// OldKeys open what they sealed beside $REWIND_KEY_FILE's key (a
	// rekey's old keys).
	OldKeys []*seal.Key
	// Graph is the graph to open instead of the ticket's (nil: the
	// ticket's); its mock stands in for the model when the flags choose
	// the mock.
	Graph *Graph
}

// Graph is a graph of another shape than the ticket's the app can open
// (`rewind tui --graph NAME`): the graph, built afresh for each engine,
// and its offline mock.
type Graph struct {
	Name string
	New  func() *engine.Graph
	Mock func() *model.Mock
}

// App is an open store with the ticket graph's engine on it.
type App struct {
	Engine *engine.Engine
	Store  Store
	// Sources are the versions of the records the mock's tools read.
	Sources ticket.Sources
	close   func() error
}

// Open builds the model first, so a bad model flag is refused before any
// store is opened (or a sqlite file created), then opens the store and the
// engine. Close the App when done.
func Open(ctx context.Context, cfg Config) (*App, error) {
	var m model.Model = noModel{}
	if cfg.Model != nil {
		mf := *cfg.Model
		if cfg.Graph != nil {
			mf.Mock = cfg.Graph.Mock
		}
		var err error
		if m, err = mf.Build(ctx); err != nil {
			return nil, err
		}
	}
	spec := ResolveStore(cfg.Store)
	open := spec.Open
	if cfg.ReadOnly {
		open = spec.OpenRead
	}
	keys, err := Keys(cfg.OldKeys...)
	if err != nil {
		return nil, err
	}
	opts, err := TicketOptions(keys)
	if err != nil {
		return nil, err
	}
	st, err := open(ctx)
	if err != nil {
		return nil, err
	}
	src := spec.Sources()
	var e *engine.Engine
	if cfg.Graph != nil {
		g := cfg.Graph.New()
		e, err = engine.New(engine.SealStore(st, g, keys), g, m, engine.WithKeys(keys))
	} else {
		e, err = ticket.NewEngine(st, m, append(opts, ticket.WithSources(src))...)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start the engine on %s: %w", spec.Label(), err), st.Close())
	}
	if cfg.Model != nil {
		e.SetMaxTokensPerTurn(cfg.Model.MaxTokensPerTurn) // every run's budget, the TUI's too
	}
	return &App{Engine: e, Store: spec, Sources: src, close: st.Close}, nil
}

// noModel is the model of a command that runs none.
type noModel struct{}

func (noModel) Complete(context.Context, model.Request) (model.Response, error) {
	return model.Response{}, errors.New("this command runs no model: use run, resume, fork, approve or reject")
}

// Close closes the store.
func (a *App) Close() error { return a.close() }
