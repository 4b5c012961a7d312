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
	"rewind/engine/ticket"
)

// Config is what the flags say about the app.
type Config struct {
	// Store is --store; empty falls back as ResolveStore says.
	Store string
	Model ModelFlags
}

// App is an open store with the ticket graph's engine on it.
type App struct {
	Engine *engine.Engine
	Store  Store
	close  func() error
}

// Open builds the model first, so a bad model flag is refused before any
// store is opened (or a sqlite file created), then opens the store and the
// engine. Close the App when done.
func Open(ctx context.Context, cfg Config) (*App, error) {
	m, err := cfg.Model.Build(ctx)
	if err != nil {
		return nil, err
	}
	spec := ResolveStore(cfg.Store)
	st, err := spec.Open(ctx)
	if err != nil {
		return nil, err
	}
	e, err := ticket.NewEngine(st, m)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start the engine on %s: %w", spec.Label(), err), st.Close())
	}
	return &App{Engine: e, Store: spec, close: st.Close}, nil
}

// Close closes the store.
func (a *App) Close() error { return a.close() }
