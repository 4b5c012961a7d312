package engine_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"rewind/engine"
	"rewind/engine/model"
	"rewind/engine/ticket"
	"rewind/store"
	"rewind/store/memory"
	"rewind/store/sqlite"
)

// stateCounter counts the calls that read checkpoint states.
type stateCounter struct {
	store.Store
	reads atomic.Int64
}

func (s *stateCounter) Get(ctx context.Context, thread string, id int64) (store.Checkpoint, error) {
	s.reads.Add(1)
	return s.Store.Get(ctx, thread, id)
}

func (s *stateCounter) Chain(ctx context.Context, thread string, id int64) ([]store.Checkpoint, error) {
	s.reads.Add(1)
	return s.Store.Chain(ctx, thread, id)
}

func (s *stateCounter) Latest(ctx context.Context, thread string) (store.Checkpoint, error) {
	s.reads.Add(1)
	return s.Store.Latest(ctx, thread)
}

// Costs read from the listings give exactly what reading every
// checkpoint's state gave, for the thread and for each branch, on a thread
// with several turns, a compaction, a fork and a half-finished superstep,
// on every store and after reopening it.
func TestCostsFromListingsMatchTheStates(t *testing.T) {
	t.Parallel()
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel() // each store its own: PostgreSQL's mostly waits
			ctx := t.Context()
			st, reopen := sc.open(t)
			mock := ticket.NewMock()
			e, err := ticket.NewEngine(st, mock)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				if _, err := e.Run(ctx, "c", ticket.Input(sentences[i%len(sentences)]), engine.RunConfig{}); err != nil {
					t.Fatal(err)
				}
			}
			mainHead, err := e.Latest(ctx, "c")
			if err != nil {
				t.Fatal(err)
			}
			fork, err := e.Fork(ctx, "c", 3, ticket.Input(sentences[2]), engine.RunConfig{})
			if err != nil {
				t.Fatal(err)
			}
			// A superstep one executor failed: the others' calls are
			// stored as pending writes only.
			mock.FailRole(model.RoleExecutor, 1)
			if _, err := e.Run(ctx, "c", ticket.Input(sentences[0]), engine.RunConfig{}); err == nil {
				t.Fatal("the failing executor did not fail the run")
			}
			if w, err := e.PendingWrites(ctx, "c", mustLatest(t, e, "c").ID); err != nil || len(w) == 0 {
				t.Fatalf("no pending writes to count (%v): the test lost its half-finished superstep", err)
			}
			// The costs from every state at each head, read once: the
			// reopened store holds the same rows (nothing is written after
			// the first check), and reading them all again was a fifth of
			// the test's CPU.
			wants := map[int64]engine.Costs{}
			check := func(e *engine.Engine, when string) {
				for _, head := range []int64{0, mainHead.ID, fork.Checkpoint, 3} {
					got, err := e.CostsAt(ctx, "c", head)
					if err != nil {
						t.Fatal(err)
					}
					want := costsOnce(t, wants, head, func() (engine.Costs, error) { return e.CostsFromStates(ctx, "c", head) })
					if !reflect.DeepEqual(got.Roles, want.Roles) || got.Total != want.Total || !reflect.DeepEqual(got.Turns, want.Turns) {
						t.Errorf("%s: from listings %+v / %+v\nfrom states %+v / %+v", when, got.Total, got.Roles, want.Total, want.Roles)
					}
					if !reflect.DeepEqual(got.Branch, want.Branch) {
						t.Errorf("%s, branch of @%d: from listings %+v, from states %+v", when, head, got.Branch, want.Branch)
					}
					if got.Roles[model.RoleSummarizer].Calls == 0 || got.Roles[model.RoleExecutor].Calls == 0 {
						t.Fatalf("%s: roles %+v: want a compaction's summarizer call and the executors", when, got.Roles)
					}
					wantLast := map[int64]int64{0: got.Turns[len(got.Turns)-1].Start, 3: got.Turns[0].Start}
					if w, ok := wantLast[head]; ok && (got.LastTurn == nil || got.LastTurn.Start != w) {
						t.Errorf("%s, head @%d: last turn %+v, want the turn from @%d", when, head, got.LastTurn, w)
					}
				}
				// The fork's branch shares the main branch's first turns:
				// its own figures include them, the thread's count them once.
				all, _ := e.Costs(ctx, "c")
				main, _ := e.CostsAt(ctx, "c", mainHead.ID)
				forked, _ := e.CostsAt(ctx, "c", fork.Checkpoint)
				shared, _ := e.CostsAt(ctx, "c", 3)
				var sum model.Usage
				for _, tu := range all.Turns {
					sum.Add(tu.Total)
				}
				if sum != all.Total {
					t.Errorf("%s: turns add up to %+v, the thread to %+v", when, sum, all.Total)
				}
				// Each branch's own turns, plus what they share, are in the
				// thread's total once (the failed turn is the fork's).
				own := main.Branch.Total.PromptTokens + forked.Branch.Total.PromptTokens - shared.Branch.Total.PromptTokens
				if shared.Branch.Total.PromptTokens == 0 || own+all.LastTurn.Total.PromptTokens != all.Total.PromptTokens {
					t.Errorf("%s: main %d + fork %d - shared %d + the last turn %d prompt tokens, the thread %d",
						when, main.Branch.Total.PromptTokens, forked.Branch.Total.PromptTokens, shared.Branch.Total.PromptTokens, all.LastTurn.Total.PromptTokens, all.Total.PromptTokens)
				}
			}
			check(e, "this process")
			if reopen != nil {
				e2, err := ticket.NewEngine(reopen(), ticket.NewMock())
				if err != nil {
					t.Fatal(err)
				}
				check(e2, "after reopening")
			}
		})
	}
}

// costsOnce is wants[head], read (and kept there) the first time.
func costsOnce(t *testing.T, wants map[int64]engine.Costs, head int64, read func() (engine.Costs, error)) engine.Costs {
	t.Helper()
	if c, ok := wants[head]; ok {
		return c
	}
	c, err := read()
	if err != nil {
		t.Fatal(err)
	}
	wants[head] = c
	return c
}

func mustLatest(t *testing.T, e *engine.Engine, thread string) engine.Checkpoint {
	t.Helper()
	cp, err := e.Latest(t.Context(), thread)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// Costs and a budget's resume read listings, not states: no Get, Chain or
// Latest reaches the store while Costs sums a thread.
func TestCostsReadNoState(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st := &stateCounter{Store: memory.New()}
	e, err := ticket.NewEngine(st, ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := e.Run(ctx, "c", ticket.Input(sentences[i]), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	st.reads.Store(0)
	c, err := e.Costs(ctx, "c")
	if err != nil || c.Total.PromptTokens == 0 {
		t.Fatalf("costs %+v, %v", c.Total, err)
	}
	if n := st.reads.Load(); n != 0 {
		t.Errorf("Costs read %d state(s): want the listings only", n)
	}
	// Every listing with calls holds their tokens.
	hist, err := e.History(ctx, "c", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, cp := range hist {
		calls := 0
		for _, r := range cp.Metadata.Tokens {
			calls += r.Calls
		}
		want := 0
		for _, n := range cp.Metadata.ModelCalls {
			want += n
		}
		if calls != want {
			t.Errorf("@%d lists %d call(s) with tokens, %d by role", cp.ID, calls, want)
		}
	}
}

// A run stopped by its token budget records why: the checkpoint it stops
// at is paused with the reason, and a run.token_budget event is stored with
// it; a resume with a larger budget carries on.
func TestTokenBudgetPausesTheRunWithAnEvent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e, err := ticket.NewEngine(memory.New(), ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Run(ctx, "b", ticket.Input(sentences[0]), engine.RunConfig{MaxTokensPerTurn: 1})
	var f engine.Fixer
	if !errors.Is(err, engine.ErrTokenBudget) || !errors.As(err, &f) || len(f.Fixes()) != 2 || f.Fixes()[1].Action != engine.FixBudget {
		t.Fatalf("run: %v, want the budget's error, its fixes a resume and a larger budget", err)
	}
	st, err := e.Status(ctx, "b")
	if err != nil || st.Status != engine.RunPaused || !strings.Contains(st.Reason, "token budget of 1") {
		t.Fatalf("status %+v, %v: want paused at the budget", st, err)
	}
	evs, err := e.Events(ctx, "b", st.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range evs {
		if ev.Type == engine.EventTokenBudget {
			var d struct{ Used, Budget int }
			if err := json.Unmarshal(ev.Data, &d); err != nil || d.Budget != 1 || d.Used < 1 {
				t.Errorf("event data %s (%v)", ev.Data, err)
			}
			found = true
		}
	}
	if !found {
		t.Errorf("no %s event at @%d: %+v", engine.EventTokenBudget, st.Checkpoint, evs)
	}
	res, err := e.Resume(ctx, "b", engine.RunConfig{MaxTokensPerTurn: 1 << 30})
	if err != nil || res.Status != "done" {
		t.Fatalf("resume: %s, %v", res.Status, err)
	}
	if st, _ := e.Status(ctx, "b"); st.Status != engine.RunDone || st.Reason != "" {
		t.Errorf("after the resume: %+v", st)
	}
}

// Listings stored before they held tokens (the previous release's) read
// as having none: Costs and a budget's resume read those rows' states, and
// give what they gave. The rows are made by removing the field in SQL.
func TestCostsOfListingsWithoutTokens(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, err := ticket.NewEngine(st, ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := e.Run(ctx, "o", ticket.Input(sentences[i]), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Run(ctx, "o", ticket.Input(sentences[3]), engine.RunConfig{InterruptBefore: []string{ticket.NodeCritic}}); err != nil {
		t.Fatal(err)
	}
	before, err := e.Costs(ctx, "o")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// As that release wrote them: an object, source, status and nodes
	// spelled out, the calls by role and no tokens.
	old := oldListings(t, db, engine.ListingWithoutTokens)
	stripped := 0
	for id, meta := range old {
		// An object listing says nothing of the document's format: the document does.
		if _, err := db.Exec(`UPDATE graph_checkpoints SET meta = ?, state = json_set(state, '$.format', 3) WHERE thread_id = 'o' AND checkpoint_id = ?`, string(meta), id); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(meta), `"calls"`) {
			stripped++
		}
	}
	if stripped < 10 {
		t.Fatalf("stripped %d listings", stripped)
	}
	oldEngine, err := ticket.NewEngine(st, ticket.NewMock()) // no cache of the rows as they were
	if err != nil {
		t.Fatal(err)
	}
	after, err := oldEngine.Costs(ctx, "o")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("costs with tokens listed %+v, without %+v", before.Total, after.Total)
	}
	// The interrupted turn's tokens count against a budget just the same.
	last := after.LastTurn.Total
	budget := last.PromptTokens + last.CompletionTokens
	if _, err := oldEngine.Resume(ctx, "o", engine.RunConfig{MaxTokensPerTurn: budget}); !errors.Is(err, engine.ErrTokenBudget) {
		t.Errorf("resume under a budget the turn has used: %v", err)
	}
}

// listingCounter counts the listings History hands out.
type listingCounter struct {
	store.Store
	rows atomic.Int64
}

func (s *listingCounter) History(ctx context.Context, thread string, before int64, limit int) ([]store.Checkpoint, error) {
	rows, err := s.Store.History(ctx, thread, before, limit)
	s.rows.Add(int64(len(rows)))
	return rows, err
}

// Costs at any checkpoint of a long thread read the newest turns'
// listings and the head's turn, not every listing (the turns' first
// checkpoints keep running totals), and give what every listing gives:
// with forks, a half-finished superstep, and after reopening the store.
// A thread whose listings hold no totals (the release before them) still
// answers, from every listing, and its next turn sums them once.
func TestCostsReadTheNewestTurnsOnly(t *testing.T) {
	t.Parallel()
	// 28 turns (about 240 checkpoints): Costs reads at most 96 listings
	// (three pages back from the newest), well under half, while a read of
	// every listing is over half at each head past the middle. 40 turns
	// caught nothing more and cost a third more under -race.
	const turns = 28
	for _, sc := range storeCases {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			st, reopen := sc.open(t)
			mock := ticket.NewMock()
			e, err := ticket.NewEngine(st, mock)
			if err != nil {
				t.Fatal(err)
			}
			for i := range turns {
				if _, err := e.Run(ctx, "s", ticket.Input(sentences[i%len(sentences)]), engine.RunConfig{}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := e.Fork(ctx, "s", 50, ticket.Input(sentences[1]), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Run(ctx, "s", ticket.Input(sentences[2]), engine.RunConfig{}); err != nil {
				t.Fatal(err)
			}
			mock.FailRole(model.RoleExecutor, 1)
			if _, err := e.Run(ctx, "s", ticket.Input(sentences[0]), engine.RunConfig{}); err == nil {
				t.Fatal("the failing executor did not fail the run")
			}
			newest := mustLatest(t, e, "s").ID
			heads := []int64{0, 1, 2, 50, 51, newest - 3}
			for id := int64(7); id < newest; id += 23 {
				heads = append(heads, id)
			}
			// The costs from every listing at each head, read once: the
			// reopened store holds the same rows (nothing is written after
			// the first check), and reading them all again was a sixth of
			// the test's CPU.
			wants := map[int64]engine.Costs{}
			check := func(st store.Store, when string) {
				t.Helper()
				counted := &listingCounter{Store: st}
				e, err := ticket.NewEngine(counted, ticket.NewMock())
				if err != nil {
					t.Fatal(err)
				}
				for _, head := range heads {
					counted.rows.Store(0)
					got, err := e.CostsAt(ctx, "s", head)
					if err != nil {
						t.Fatal(err)
					}
					read := counted.rows.Load()
					want := costsOnce(t, wants, head, func() (engine.Costs, error) { return e.CostsByScan(ctx, "s", head) })
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s, costs at @%d: from running totals\n%+v\nfrom every listing\n%+v", when, head, got, want)
					}
					if read >= newest/2 {
						t.Errorf("%s, costs at @%d read %d listings of %d", when, head, read, newest)
					}
					if head == 0 && (len(got.Turns) != engine.CostTurns || got.EarlierTurns != turns+2+1-engine.CostTurns) {
						t.Errorf("%s: %d turns listed and %d earlier, want %d and %d", when, len(got.Turns), got.EarlierTurns, engine.CostTurns, turns+3-engine.CostTurns)
					}
				}
			}
			check(st, "this process")
			if reopen != nil {
				check(reopen(), "after reopening")
			}
		})
	}
}

// A thread written before turns kept running totals: Costs reads every
// listing and gives the same; the next turn sums them once, and Costs
// reads the newest turns only from then on.
func TestCostsOfListingsWithoutSums(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "old.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, err := ticket.NewEngine(st, ticket.NewMock())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := e.Run(ctx, "o", ticket.Input(sentences[i%len(sentences)]), engine.RunConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old := oldListings(t, db, engine.ListingWithoutSums)
	for id, meta := range old {
		if _, err := db.Exec(`UPDATE graph_checkpoints SET meta = ? WHERE thread_id = 'o' AND checkpoint_id = ?`, string(meta), id); err != nil {
			t.Fatal(err)
		}
	}
	costs := func(head int64) (engine.Costs, engine.Costs, int64) {
		t.Helper()
		counted := &listingCounter{Store: st}
		e, err := ticket.NewEngine(counted, ticket.NewMock()) // nothing cached
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.CostsAt(ctx, "o", head)
		if err != nil {
			t.Fatal(err)
		}
		read := counted.rows.Load()
		want, err := e.CostsByScan(ctx, "o", head)
		if err != nil {
			t.Fatal(err)
		}
		return got, want, read
	}
	n := int64(len(old))
	if got, want, read := costs(0); !reflect.DeepEqual(got, want) || read < n {
		t.Fatalf("without running totals: %d listings read of %d, costs\n%+v\nwant\n%+v", read, n, got, want)
	}
	if _, err := e.Run(ctx, "o", ticket.Input(sentences[0]), engine.RunConfig{}); err != nil {
		t.Fatal(err)
	}
	for _, head := range []int64{0, n + 1, n} {
		got, want, read := costs(head)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("costs at @%d after a turn summed them: %+v\nwant %+v", head, got, want)
		}
		if head != n && read >= n*3/4 {
			t.Errorf("costs at @%d read %d listings of %d after a turn summed them", head, read, n)
		}
	}
}

// oldListings is thread o's listings as rows of the SQLite file db, each
// turned back into an older release's by older.
func oldListings(t *testing.T, db *sql.DB, older func([]byte) ([]byte, error)) map[int64][]byte {
	t.Helper()
	rows, err := db.Query(`SELECT checkpoint_id, meta FROM graph_checkpoints WHERE thread_id = 'o'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	old := map[int64][]byte{}
	for rows.Next() {
		var id int64
		var meta []byte
		if err := rows.Scan(&id, &meta); err != nil {
			t.Fatal(err)
		}
		if old[id], err = older(meta); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return old
}
