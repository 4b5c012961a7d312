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
	"slices"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/model/openai"
	"rewind/engine/model/replay"
	"rewind/engine/recorded"
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
	// Thread and Choose: a command that opens thread Thread takes the
	// graph Choose picks from what the thread records (RecordedGraph; ""
	// for a new thread or one stored before graphs were recorded). Nil
	// Choose: Graph, as it is.
	Thread string
	Choose func(recorded string) (*Graph, error)
}

// Graph is a graph of another shape than the ticket's the app can open
// (`rewind tui --graph NAME`): the graph, built afresh for each engine,
// and its offline mock.
type Graph struct {
	Name string
	New  func() *engine.Graph
	Mock func() *model.Mock
	// Roles are the roles its mock plays (nil: the ticket's), what
	// --mock-fail may name.
	Roles []string
}

// App is an open store with the ticket graph's engine on it.
type App struct {
	Engine *engine.Engine
	// Graph is the graph the engine runs (nil: the ticket's).
	Graph *Graph
	Store Store
	// Sources are the versions of the records the mock's tools read.
	Sources ticket.Sources
	close   func() error
	// build is a graph's engine on this store and model (For).
	build func(*Graph) (*engine.Engine, error)
}

// Open builds the model first, so a bad model flag is refused before any
// store is opened (or a sqlite file created), then opens the store and the
// engine. Close the App when done.
func Open(ctx context.Context, cfg Config) (*App, error) {
	var m model.Model = noModel{}
	// The mock built, if any: a graph Choose picks later answers in it.
	var mock *model.Mock
	if cfg.Model != nil {
		mf := *cfg.Model
		mf.Mock = func() *model.Mock { mock = cfg.Graph.mock(); return mock }
		mf.graph = cfg.Graph
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
	build := func(g *Graph, m model.Model) (*engine.Engine, error) {
		if g == nil {
			return ticket.NewEngine(st, m, append(opts, ticket.WithSources(src))...)
		}
		eg := g.New()
		return engine.New(engine.SealStore(st, eg, keys), eg, m, engine.WithKeys(keys))
	}
	g := cfg.Graph
	if cfg.Choose != nil {
		// Which graph the thread records is read from the store's listings,
		// before any engine: the one built is that graph's.
		picked, err := choose(ctx, recorded.Rows(st), cfg)
		if err != nil {
			return nil, errors.Join(err, st.Close())
		}
		if picked.name() != g.name() {
			g = picked
			if mock != nil {
				fresh := g.mock() // the flags' latency and failures stay
				mock.Respond, mock.Window = fresh.Respond, fresh.Window
			}
		}
	}
	e, err := build(g, m)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("start the engine on %s: %w", spec.Label(), err), st.Close())
	}
	if cfg.Model != nil {
		e.SetMaxTokensPerTurn(cfg.Model.MaxTokensPerTurn) // every run's budget, the TUI's too
	}
	// Another graph's engine shares the store and the model, but not the
	// mock: each graph's mock answers its own roles.
	other := func(og *Graph) (*engine.Engine, error) {
		om := m
		if mock != nil {
			mf := *cfg.Model
			mf.Mock, mf.graph = og.mock, og
			var err error
			if om, err = mf.mock(); err != nil {
				return nil, err
			}
			if rec, ok := m.(*replay.Recorder); ok {
				om = rec.For(om) // --record: into the same file as the first graph's calls
			}
		}
		oe, err := build(og, om)
		if err == nil && cfg.Model != nil {
			oe.SetMaxTokensPerTurn(cfg.Model.MaxTokensPerTurn)
		}
		return oe, err
	}
	return &App{Engine: e, Graph: g, Store: spec, Sources: src, close: st.Close, build: other}, nil
}

// For is graph g's engine (nil: the ticket's) on the store a opened, with
// the model its flags chose (the mock: g's own): what `rewind tui` opens
// a thread of another graph on. The store stays a's: Close closes it.
func (a *App) For(g *Graph) (*engine.Engine, error) {
	e, err := a.build(g)
	if err != nil {
		return nil, fmt.Errorf("start graph %s's engine on %s: %w", g.name(), a.Store.Label(), err)
	}
	return e, nil
}

// choose is the graph cfg.Choose picks for what cfg.Thread records, read
// through h.
func choose(ctx context.Context, h recorded.History, cfg Config) (*Graph, error) {
	rec := ""
	if cfg.Thread != "" {
		var err error
		if rec, err = recorded.Graph(ctx, h, cfg.Thread); err != nil {
			return nil, err
		}
	}
	picked, err := cfg.Choose(rec)
	if err == nil && cfg.Model != nil && picked.name() != cfg.Graph.name() {
		err = cfg.Model.canFail(picked) // the thread's graph's roles, not --graph's
	}
	return picked, err
}

// RecordedGraph is the graph thread records (recorded.Graph), read
// through e, whose graph any is: "" for a thread that is not there or
// was stored before graphs were recorded.
func RecordedGraph(ctx context.Context, e *engine.Engine, thread string) (string, error) {
	return recorded.Graph(ctx, e, thread)
}

// name is the graph's name, the ticket's for nil.
func (g *Graph) name() string {
	if g == nil {
		return ticket.GraphName
	}
	return g.Name
}

// MockRoles are the roles the graph's mock plays, the ticket's for nil.
func (g *Graph) MockRoles() []string {
	if g == nil || g.Roles == nil {
		return slices.Clone(openai.Roles)
	}
	return g.Roles
}

// mock is the graph's offline mock, the ticket's for nil.
func (g *Graph) mock() *model.Mock {
	if g == nil || g.Mock == nil {
		return ticket.NewMock()
	}
	return g.Mock()
}

// noModel is the model of a command that runs none.
type noModel struct{}

func (noModel) Complete(context.Context, model.Request) (model.Response, error) {
	return model.Response{}, errors.New("this command runs no model: use run, resume, fork, approve or reject")
}

// Close closes the store.
func (a *App) Close() error { return a.close() }
