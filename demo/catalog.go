package demo

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"rewind/demo/research"
	"rewind/engine"
	"rewind/engine/bench"
	"rewind/engine/drill"
	"rewind/engine/model"
	"rewind/engine/selftest"
	"rewind/engine/ticket"
	"rewind/engine/worker"
	"rewind/store"
)

// The lesson threads.
const (
	ThreadSummary     = "lesson:summary"
	ThreadSummaryBad  = "lesson:summary-bad-summarizer"
	ThreadFork        = "lesson:fork"
	ThreadForkWrong   = "lesson:fork-without-id"
	ThreadBytesRef    = "lesson:bytes-reference"
	ThreadBytesBlob   = "lesson:bytes-inline"
	ThreadNewerSchema = "lesson:newer-schema"
	ThreadSiteLog     = "lesson:site-log"
	// ThreadKillByHand is the kill lesson's thread for a kill by hand.
	ThreadKillByHand = "lesson:kill-by-hand"
	// ThreadResearch is the research graph's lesson thread.
	ThreadResearch = "lesson:research"
)

// The customer's turns of the summary lesson: enough to compact twice.
var summaryTurns = []string{
	"My order SO20260901 hasn't arrived yet: what is the order status, where is the parcel now, and can I get a refund if it is lost?",
	"I paid 49.95 EUR by card on 2026-09-01. Please send me the invoice.",
	"change the delivery address to my office",
	"Can I still cancel it?",
}

var lessons = []Lesson{
	{
		Name: "summary", Title: "The summary vs the verbatim tail",
		Proves: "compaction keeps each message's #index and speaker, pins facts verbatim, and a summary that changes a fact is refused before it is stored",
		Thread: ThreadSummary,
		Steps: []Step{
			{Do: "1 (Conversation), then h/l along the timeline", See: "the summary box of #1–#N stays apart from the verbatim tail, which starts at #N+1"},
			{Do: "2 (State tab)", See: "the fidelity badge: every pinned fact kept with its index and speaker, or folded by the 2,000-rune budget"},
			{Do: "scrub to the first summarizer checkpoint", See: "every summary line starts with #index speaker:, ids and amounts (SO20260901, 49.95 EUR) copied verbatim"},
			{Command: []string{"check", "fidelity", ThreadSummary}, See: "PASS: every pinned fact kept with its index and speaker (or folded by the 2,000-rune budget)", Expect: []string{"PASS: ", "pinned facts kept with their index and speaker"}},
			{Do: "open thread " + ThreadSummaryBad, See: "a summarizer that changes ids was refused: context.compaction_rejected, no summary stored, the run went on"},
		},
		run: runSummary,
	},
	{
		Name: "site-log", Title: "Two weeks of a site log: what a summary must never rewrite",
		Proves: "through repeated compaction the summary keeps depths, batches, change orders and who signed verbatim with their #index and speaker, or says it folded them",
		Thread: ThreadSiteLog,
		Steps: []Step{
			{Do: "open " + ThreadSiteLog + ", 1 (Conversation), G (last checkpoint)", See: "the summary box: phase lines #a–#b with their speakers and how many facts they retired; sign-offs (signed by J. Devries) kept verbatim longest"},
			{Command: []string{"show", ThreadSiteLog, "--message", "1"}, See: "the original day 1 entry, still stored after compaction folded it", Expect: []string{"#1 user", "Day 1 (DL20261001): excavation at grid C2"}},
			{Command: []string{"check", "fidelity", ThreadSiteLog, "--all"}, See: "each pinned fact: kept on its own #index speaker: line, or folded (its line folded into a phase, the fact on its message's line of the facts ledger); none lost, altered or moved", Expect: []string{"PASS: ", "folded"}},
		},
		run: runSiteLog,
	},
	{
		Name: "dangling-cut", Title: "A cut between a tool call and its result",
		Proves: "rewind's cut keeps a tool call and its result on the same side, so the model's request is answered; the same compaction cut between them gets the vendor's 400",
		Thread: ThreadDanglingCut,
		Steps: []Step{
			{Do: "open " + ThreadDanglingCut + ", 1 (Conversation), G (last checkpoint)", See: "the summary box, then the verbatim tail: each executor's tool call with its tool result right after it"},
			{Do: "P (what the model saw) on the reply's checkpoint", See: "the reply's request: the assistant's tool_calls, each answered by its tool message; the stand-in answered it"},
			{Do: "open " + ThreadDanglingCutWrong + " (the wrong way), G", See: "the same compaction with the cut moved on to a tool result: the tail opens with it while its call went into the summary; the reply is still due"},
			{Command: []string{"resume", ThreadDanglingCutWrong}, See: "the reply's request holds a tool message without its call: the model answers 400 (the mock holds requests to the vendors' rules, as the stand-in does), exit 1, nothing stored", Expect: []string{"400 invalid_request_error", "messages with role 'tool' must be a response to a preceding message with 'tool_calls'"}, Exit: 1},
		},
		run: runDanglingCut,
	},
	{
		Name: "narrative-summary", Title: "An indexed summary vs a flattened narrative",
		Proves: "the critic finds the customer's requirement by its #index speaker in the summary and sends back an output that answers another question; with a flattened narrative summary it has nothing to check against and approves it",
		Thread: ThreadNarrative,
		Steps: []Step{
			{Do: "open " + ThreadNarrative + ", 1 (Conversation)", See: "the summary line #1 user: the customer's two questions (a refund, the invoice); the executors' work verbatim after it"},
			{Do: "scrub to the critic's first review, P (what the model saw)", See: "the critic's request: the summary's #1 user: line is the only place the requirement is; its task lists the outputs"},
			{Do: "1 (Conversation) on the last checkpoint", See: "review 1 sent t-1-refund back: it answers another question (where the parcel is); the redo answers the refund"},
			{Do: "open " + ThreadNarrativeWrong + " (the wrong way)", See: "the same turn with the summary flattened to \"" + Flattened + "\": review 1 approved everything, and the reply tells a customer asking for a refund where the parcel is"},
			{Command: []string{"check", "fidelity", ThreadNarrative}, See: "PASS: the requirement's order number is on its #1 user: line", Expect: []string{"PASS: 1 of 1 pinned facts kept"}},
			{Command: []string{"check", "fidelity", ThreadNarrativeWrong}, See: "FAIL (exit 1): the flattened summary lost #1 user's SO20260901: the check that stops such a summary before it is stored", Expect: []string{"lost", "#1 user: SO20260901", "FAIL: "}, Exit: 1},
		},
		run: runNarrative,
	},
	{
		Name: "resume", Title: "Resume vs the wrong resume",
		Proves: "a resume takes no input: it continues the pending tasks; feeding the input again doubles the user's sentence",
		Thread: selftest.ThreadMain,
		Steps: []Step{
			{Do: "open " + selftest.ThreadMain + ", 1 (Conversation)", See: "the customer's sentence once: the run was interrupted before the executors and resumed with no input"},
			{Do: "scrub to the interrupted checkpoint, 3 (Inspector)", See: "3 pending executor tasks with their full arguments: the resume ran exactly those"},
			{Do: "open " + selftest.ThreadWrong, See: "the same sentence twice: the input was fed again at the interrupt (the wrong way)"},
			{Command: []string{"show", selftest.ThreadWrong, "--message", "2"}, See: "the wrong way's #2 is the customer's sentence again: one extra user message is all it added", Expect: []string{"#2 user", selftest.SentenceMain}},
			{Command: []string{"show", selftest.ThreadMain, "@8", "--message", "2"}, See: "the resumed run's #2 (@8 ends its turn) is the first executor's tool call: the sentence is there once", Expect: []string{"#2 executor[t-1-order]", "calling lookup_order"}},
		},
		run: runResume,
	},
	{
		Name: "fork", Title: "Fork with and without a checkpoint id",
		Proves: "a fork from a named checkpoint is a new branch and leaves the head alone; a new input without the id lands on the head",
		Thread: ThreadFork,
		Steps: []Step{
			{Do: "open " + ThreadFork + ", [ and ] to switch branches", See: "two branches from @1: the original turn and the fork's sentence, both whole"},
			{Do: "f on @1 and type a new sentence", See: "a third branch appears; nothing is deleted"},
			{Do: "open " + ThreadForkWrong, See: "one straight chain: the second sentence went on top of the head, so the first turn's answer is now history, not a branch"},
		},
		run: runFork,
	},
	{
		Name: "migration", Title: "Reading an old checkpoint",
		Proves: "a v1 checkpoint read without its migration is wrong; through the registry it is right; a newer schema is refused with the fix named",
		Thread: selftest.ThreadV1,
		Steps: []Step{
			{Do: "open " + selftest.ThreadV1, See: "the state of a v1 checkpoint, read through the v1→v2 migration (schema v2, migrated from v1)"},
			{Command: []string{"show", selftest.ThreadV1, "--json"}, See: "migratedFrom: 1; the attachment reference and the budget as v2 names them", Expect: []string{`"migratedFrom": 1`, "blob://tickets/2025/att-old.png"}},
			{Command: []string{"show", ThreadNewerSchema}, See: "a checkpoint a newer rewind wrote is refused (exit 1), and the error says to upgrade rewind", Expect: []string{"schema v99", "upgrade rewind"}, Exit: 1},
		},
		run: runMigration,
	},
	{
		Name: "kill", Title: "Kill points", Processes: true,
		Proves: "at every seed kill point a resume redoes only what was lost: pending tasks kept, stored writes reused, no duplicate side effect",
		Thread: "drill:mid-fanout",
		Steps: []Step{
			{Do: "K (arm a kill point), choose mid-fanout, then i (write a message), a message, enter", See: "the worker dies after one executor stored its writes"},
			{Do: "r (resume)", See: "the strip: ↺ reused for the stored executor, ↻ redispatched for the others"},
			{Do: "or kill by hand: i, a message, enter, then X (asks y/n) while the executors run", See: "a real SIGKILL of the worker; r shows which executors were reused"},
			{Command: []string{"run", "--thread", ThreadKillByHand, "--input", selftest.SentenceMain, "--mock-latency", "300ms", "--mock-jitter", "900ms", "--kill-at", "mid-fanout"}, See: "in a terminal: the run SIGKILLs itself once one executor stored its writes (exit 137); without --kill-at, kill -9 it during the fan-out", Expect: []string{"kill point mid-fanout reached: SIGKILL"}, Exit: ExitKilled},
			{Command: []string{"resume", ThreadKillByHand}, See: "the stored executor is reused (↺), the others redispatched, and the turn ends", Expect: []string{"writes already stored, not run again", "2 redispatched, 1 reused"}},
		},
		run: runKill,
	},
	{
		Name: "side-effect", Title: "A side effect behind approval, killed and resumed", Processes: true,
		Proves: "a draft killed right after it was written is found by its operation id on resume: exactly one draft",
		Thread: "drill:after-side-effect",
		Steps: []Step{
			{Do: "i (write a message), ctrl+d (draft reply: ON), a message, enter", See: "the turn runs and waits at the approval gate: the draft and its operation id in the strip"},
			{Do: "K (arm a kill point), choose after-side-effect, then a (approve) and y", See: "create_draft writes the draft and the worker dies before its checkpoint"},
			{Do: "r (resume)", See: "the strip: create_draft redispatched, looked the id up first and found the draft: ↺ operation … reused: found done by its id, not written again"},
		},
		run: runSideEffect,
	},
	{
		Name: "bytes", Title: "Bytes per checkpoint",
		Proves: "a large value is stored once, by hash, not again in every checkpoint",
		Thread: ThreadBytesBlob,
		Steps: []Step{
			{Do: "open " + ThreadBytesBlob + ", 3 (Inspector)", See: "the first checkpoint stores the 384 KB value; the next ones store only what changed"},
			{Command: []string{"show", ThreadBytesBlob, "@1"}, See: "WRITES that made this checkpoint: the input, with the 384 KB value, stored once", Expect: []string{"WRITES that made this checkpoint (39", "KB stored)"}},
			{Command: []string{"show", ThreadBytesBlob, "@9"}, See: "the next turn's input stores a few hundred bytes: the value is not stored again", Expect: []string{"WRITES that made this checkpoint (", " bytes stored)"}},
		},
		run: runBytes,
	},
	{
		Name: "stale-source", Title: "A source that changes while the run waits", Processes: true,
		Proves: "a record that changes after it was read is caught: re-read before the reply, or the write is blocked at the gate, or the verification fails",
		Thread: "drill:" + drill.SourcePoint(worker.AwaitingApproval),
		Steps: []Step{
			{Do: "i (write a message), ctrl+d (draft reply: ON), a sentence about SO20260901's parcel, enter", See: "the turn runs and waits at the approval gate (awaiting-approval)"},
			{Command: []string{"source", "bump", "shipments/SO20260901"}, See: "in another terminal: the record's version moves on in the lesson store while the run waits for approval", Expect: []string{"shipments/SO20260901: v"}},
			{Do: "a (approve), then y", See: "the gate blocks the draft, naming the record and both versions: no row in the drafts table"},
		},
		run: runStale,
	},
	{
		Name: "research", Title: "A graph of another shape: fan-out, a tool loop, a gate answered as state", Graph: research.Name,
		Proves: "rewind runs and shows a graph it did not write: parallel searches merged into one channel by its reducer, a writer's tool loop that ends, a gate whose answer is state (revise loops back to the writer, approve publishes)",
		Thread: ThreadResearch,
		Steps: []Step{
			{Do: "h/l to @2, 3 (Inspector)", See: "plan's three Sends: search ×3 pending, each with its sub-question as arguments"},
			{Do: "l to @3, 2 (State), the notes channel", See: "three notes, q1–q3, written by three parallel tasks into one channel and merged by id (the keyed reducer)"},
			{Do: "v (graph view), then esc", See: "the graph as declared: plan → search ×N (Send) → write → publish, and publish ⟲ write, the revision's way back"},
			{Do: "l to @4, 1 (Conversation)", See: "the writer's loop: its cite calls, each joined to the tool message that answers it, then its draft with no call: the loop ended"},
			{Do: "l to @5, 3 (Inspector)", See: "the person's answer is state: an update wrote review = revise with a note, and publish stayed due"},
			{Do: "l to @7, 1 (Conversation)", See: "the writer looked the note up (lookup) and wrote the draft again; publish asked again"},
			{Command: []string{"log", ThreadResearch}, See: "the whole session from the listings: search ×3 due after plan, the two answers as update checkpoints, publish last", Expect: []string{"search ×3", "update", "publish"}},
			{Command: []string{"search", ThreadResearch, "locking"}, See: "the reviewer's note, the writer's lookup of it and the revised draft, found in the stored transcript", Expect: []string{"reviewer: revise: say more on [locking]", `{"topic":"say more on [locking]"}`, "(revised: say more on [locking])"}},
		},
		run: runResearch,
	},
}

func runSummary(ctx context.Context, env Env) (Verdict, error) {
	fig := map[string]any{}
	var fails []string
	err := withEngine(ctx, env, nil, func(e *engine.Engine, st store.Store) error {
		if err := fresh(ctx, st, ThreadSummary, ThreadSummaryBad); err != nil {
			return err
		}
		for _, turn := range summaryTurns {
			if _, err := e.Run(ctx, ThreadSummary, ticket.Input(turn), engine.RunConfig{}); err != nil {
				return err
			}
		}
		head, err := e.Latest(ctx, ThreadSummary)
		if err != nil {
			return err
		}
		s, err := ticket.Decode(head.Values)
		if err != nil {
			return err
		}
		if s.Summary == nil {
			fails = append(fails, "no summary after 4 turns")
			return nil
		}
		fig["summary"] = fmt.Sprintf("#%d–#%d", s.Summary.From, s.Summary.To)
		if len(s.Messages) > 0 {
			fig["tail"] = fmt.Sprintf("#%d–#%d", s.Messages[0].Index, s.Messages[len(s.Messages)-1].Index)
			if s.Messages[0].Index != s.Summary.To+1 {
				fails = append(fails, fmt.Sprintf("the tail starts at #%d, the summary ends at #%d", s.Messages[0].Index, s.Summary.To))
			}
		}
		if err := ticket.CheckSummary(s.Summary.Text, s.Summary.From, s.Summary.To); err != nil {
			fails = append(fails, "summary lines: "+err.Error())
		}
		stored, err := e.Transcript(ctx, ThreadSummary, head.ID, int64(s.Summary.From), int64(s.Summary.To))
		if err != nil {
			return err
		}
		msgs, err := decodeMessages(stored)
		if err != nil {
			return err
		}
		r := ticket.CheckFidelity(s.Summary, s.Facts, msgs)
		fig["fidelity"] = strings.TrimPrefix(r.Verdict(), "PASS: ")
		if !r.OK() {
			fails = append(fails, r.Verdict())
		}
		altered := *s.Summary
		altered.Text = strings.ReplaceAll(altered.Text, "SO20260901", "SO20260910")
		if bad := ticket.CheckFidelity(&altered, s.Facts, msgs); bad.OK() {
			fails = append(fails, "the fidelity check passed a summary with the order id changed")
		} else {
			fig["alteredFidelity"] = bad.Verdict()
		}
		return nil
	})
	if err != nil {
		return Verdict{}, err
	}
	// A summarizer that rewrites ids: the check before storing refuses it.
	var rejected bool
	err = withEngine(ctx, env, alteringSummarizer{ticket.NewMock()}, func(e *engine.Engine, _ store.Store) error {
		for _, turn := range summaryTurns {
			res, err := e.Run(ctx, ThreadSummaryBad, ticket.Input(turn), engine.RunConfig{})
			if err != nil {
				return err
			}
			if res.Status != engine.RunDone {
				fails = append(fails, "the run with a bad summarizer ended "+res.Status)
			}
		}
		evs, err := e.Events(ctx, ThreadSummaryBad, 0)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			rejected = rejected || ev.Type == "context.compaction_rejected"
		}
		head, err := e.Latest(ctx, ThreadSummaryBad)
		if err != nil {
			return err
		}
		s, err := ticket.Decode(head.Values)
		if err != nil {
			return err
		}
		if s.Summary != nil && strings.Contains(s.Summary.Text, "SO2026O") {
			fails = append(fails, "a summary with rewritten ids was stored")
		}
		return nil
	})
	if err != nil {
		return Verdict{}, err
	}
	fig["badSummarizerRejected"] = rejected
	if !rejected {
		fails = append(fails, "the summarizer that rewrites ids was not refused (no context.compaction_rejected)")
	}
	return verdict(fig, fmt.Sprintf("summary %v apart from tail %v; %v; a summarizer rewriting ids was refused before storing", fig["summary"], fig["tail"], fig["fidelity"]), fails), nil
}

// alteringSummarizer writes the order ids wrong ("SO2026O901"), as a
// careless model would.
type alteringSummarizer struct{ model.Model }

func (a alteringSummarizer) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := a.Model.Complete(ctx, req)
	if err == nil && req.Role == model.RoleSummarizer {
		resp.Text = strings.ReplaceAll(resp.Text, "SO20260", "SO2026O")
	}
	return resp, err
}

// siteLogDays is how many days the site-log lesson logs: enough to compact
// several times.
const siteLogDays = 14

func runSiteLog(ctx context.Context, env Env) (Verdict, error) {
	fig := map[string]any{}
	var fails []string
	err := withEngine(ctx, env, nil, func(e *engine.Engine, st store.Store) error {
		if err := fresh(ctx, st, ThreadSiteLog); err != nil {
			return err
		}
		for d := 1; d <= siteLogDays; d++ {
			turn := ticket.Turn{Text: ticket.SiteLogDay(d), Scenario: ticket.ScenarioSiteLog}
			if _, err := e.Run(ctx, ThreadSiteLog, turn.Writes(), engine.RunConfig{}); err != nil {
				return fmt.Errorf("day %d: %w", d, err)
			}
		}
		head, err := e.Latest(ctx, ThreadSiteLog)
		if err != nil {
			return err
		}
		s, err := ticket.Decode(head.Values)
		if err != nil {
			return err
		}
		if s.Summary == nil {
			fails = append(fails, "no summary after two weeks")
			return nil
		}
		stored, err := e.Transcript(ctx, ThreadSiteLog, head.ID, int64(s.Summary.From), int64(s.Summary.To))
		if err != nil {
			return err
		}
		msgs, err := decodeMessages(stored)
		if err != nil {
			return err
		}
		r := ticket.CheckFidelity(s.Summary, s.Facts, msgs)
		fig["summary"] = fmt.Sprintf("#%d–#%d", s.Summary.From, s.Summary.To)
		fig["compactions"] = s.Summary.HistoryVersion
		fig["fidelity"] = r.Counts
		signed := strings.Count(s.Summary.Text, "signed by J. Devries")
		fig["signOffsVerbatim"] = signed
		if !r.OK() {
			fails = append(fails, r.Verdict())
		}
		if signed == 0 {
			fails = append(fails, "no sign-off is left verbatim in the summary")
		}
		fig["line"] = fmt.Sprintf("%d days, %d compactions, summary %s in %d runes; %s; %d sign-off(s) verbatim",
			siteLogDays, s.Summary.HistoryVersion, fig["summary"], len([]rune(s.Summary.Text)), strings.TrimPrefix(r.Verdict(), "PASS: "), signed)
		return nil
	})
	if err != nil {
		return Verdict{}, err
	}
	good, _ := fig["line"].(string)
	delete(fig, "line")
	return verdict(fig, good, fails), nil
}

func runResume(ctx context.Context, env Env) (Verdict, error) {
	checks, err := selftest.Run(ctx, env.Open)
	if err != nil {
		return Verdict{}, err
	}
	c := checks[1]
	fig := c.Figures
	good := fmt.Sprintf("resume ran the %v pending subtasks (calls %v, planner %v) and the sentence is there %v time(s); the wrong way has it %v times",
		fig["pendingSubtasks"], fig["resumeStepModelCalls"], fig["plannerCallsOnResume"], fig["sentenceCopies"], fig["wrongWaySentenceCopies"])
	// selftest's check 3 forks the thread after: the lesson opens on the
	// resumed run's branch, the newest checkpoint no fork leads to.
	var at int64
	err = withEngine(ctx, env, nil, func(e *engine.Engine, _ store.Store) error {
		cps, err := e.History(ctx, selftest.ThreadMain, 0, 0)
		if err != nil {
			return err
		}
		slices.SortFunc(cps, func(a, b engine.Checkpoint) int { return cmp.Compare(a.ID, b.ID) })
		forked := map[int64]bool{}
		for _, cp := range cps {
			forked[cp.ID] = cp.Source == engine.SourceFork || forked[cp.ParentID]
			if !forked[cp.ID] {
				at = cp.ID
			}
		}
		return nil
	})
	if err != nil {
		return Verdict{}, err
	}
	fig["resumedHead"] = at
	v := verdict(fig, good, c.Failures)
	v.At = at
	return v, nil
}

func runMigration(ctx context.Context, env Env) (Verdict, error) {
	checks, err := selftest.Run(ctx, env.Open)
	if err != nil {
		return Verdict{}, err
	}
	c := checks[4]
	side := func(k string) string {
		m, _ := c.Figures[k].(map[string]any)
		return fmt.Sprintf("attachment %q, status %v, budget %v", fmt.Sprint(m["ref"]), m["status"], m["budget"])
	}
	good := fmt.Sprintf("a v1 checkpoint read raw: %s; through the migration: %s", side("without"), side("with"))
	fails := c.Failures
	// A checkpoint a newer rewind wrote: refused, naming the fix.
	refusal, err := newerSchemaRefusal(ctx, env)
	if err != nil {
		return Verdict{}, err
	}
	c.Figures["newerSchema"] = refusal
	if !strings.Contains(refusal, "upgrade rewind") {
		fails = append(fails, "a newer schema was not refused with the fix named: "+refusal)
	}
	good += "; a schema v99 checkpoint is refused: " + refusal
	return verdict(c.Figures, good, fails), nil
}

func newerSchemaRefusal(ctx context.Context, env Env) (string, error) {
	var refusal string
	err := withEngine(ctx, env, nil, func(e *engine.Engine, st store.Store) error {
		if err := fresh(ctx, st, ThreadNewerSchema); err != nil {
			return err
		}
		row := store.Checkpoint{ThreadID: ThreadNewerSchema, ID: 1, State: []byte(`{"schemaVersion": 99, "values": {}}`)}
		if err := st.PutCheckpoint(ctx, row, nil); err != nil {
			return err
		}
		_, err := e.Get(ctx, ThreadNewerSchema, 1)
		if !errors.Is(err, engine.ErrNewerSchema) {
			return fmt.Errorf("a schema v99 checkpoint read as %v, want it refused as newer", err)
		}
		refusal = err.Error()
		return nil
	})
	return refusal, err
}

func runFork(ctx context.Context, env Env) (Verdict, error) {
	fig := map[string]any{}
	var fails []string
	err := withEngine(ctx, env, nil, func(e *engine.Engine, st store.Store) error {
		if err := fresh(ctx, st, ThreadFork, ThreadForkWrong); err != nil {
			return err
		}
		for _, th := range []string{ThreadFork, ThreadForkWrong} {
			if _, err := e.Run(ctx, th, ticket.Input(selftest.SentenceMain), engine.RunConfig{}); err != nil {
				return err
			}
		}
		before, err := e.Latest(ctx, ThreadFork)
		if err != nil {
			return err
		}
		if _, err := e.Fork(ctx, ThreadFork, 1, ticket.Input(selftest.SentenceFork), engine.RunConfig{}); err != nil {
			return err
		}
		if _, err := e.Run(ctx, ThreadForkWrong, ticket.Input(selftest.SentenceFork), engine.RunConfig{}); err != nil {
			return err
		}
		right, err := children(ctx, e, ThreadFork, 1)
		if err != nil {
			return err
		}
		wrong, err := children(ctx, e, ThreadForkWrong, 1)
		if err != nil {
			return err
		}
		fig["branchesFromAt1"], fig["branchesWithoutID"] = right, wrong
		mainHead, err := e.Get(ctx, ThreadFork, before.ID)
		if err != nil {
			return err
		}
		ms, err := ticket.Decode(mainHead.Values, "messages")
		if err != nil {
			return err
		}
		wrongHead, err := e.Latest(ctx, ThreadForkWrong)
		if err != nil {
			return err
		}
		ws, err := ticket.Decode(wrongHead.Values, "messages", "summary")
		if err != nil {
			return err
		}
		fig["userMessagesOnMainHead"] = users(ms.Messages)
		fig["userMessagesOnWrongHead"] = users(ws.Messages) + summarizedUsers(ws.Summary)
		if right != 2 {
			fails = append(fails, fmt.Sprintf("@1 of %s has %d children, want 2 (the turn and the fork)", ThreadFork, right))
		}
		if wrong != 1 {
			fails = append(fails, fmt.Sprintf("@1 of %s has %d children, want 1 (no branch without an id)", ThreadForkWrong, wrong))
		}
		if users(ms.Messages) != 1 {
			fails = append(fails, "the fork changed the main branch's head")
		}
		return nil
	})
	if err != nil {
		return Verdict{}, err
	}
	good := fmt.Sprintf("with @1: %v branches from @1, the main head keeps %v request; without an id: %v branch, the head now holds %v requests",
		fig["branchesFromAt1"], fig["userMessagesOnMainHead"], fig["branchesWithoutID"], fig["userMessagesOnWrongHead"])
	return verdict(fig, good, fails), nil
}

func children(ctx context.Context, e *engine.Engine, thread string, of int64) (int, error) {
	cps, err := e.History(ctx, thread, 0, 0)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, cp := range cps {
		if cp.ParentID == of {
			n++
		}
	}
	return n, nil
}

func users(ms []ticket.Message) int {
	n := 0
	for _, m := range ms {
		if m.Role == ticket.RoleUser {
			n++
		}
	}
	return n
}

func summarizedUsers(s *ticket.Summary) int {
	if s == nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(s.Text, "\n") {
		if _, rest, ok := strings.Cut(line, " "); ok && strings.HasPrefix(rest, "user:") {
			n++
		}
	}
	return n
}

func runBytes(ctx context.Context, env Env) (Verdict, error) {
	st, err := env.Open(ctx)
	if err != nil {
		return Verdict{}, err
	}
	defer st.Close()
	if err := fresh(ctx, st, ThreadBytesRef, ThreadBytesBlob); err != nil {
		return Verdict{}, err
	}
	const turns, inline = 4, 384 << 10
	ref, err := bench.Run(ctx, st, env.Spec, bench.Options{Turns: turns, Thread: ThreadBytesRef, Reads: 1}, nil)
	if err != nil {
		return Verdict{}, err
	}
	blob, err := bench.Run(ctx, st, env.Spec, bench.Options{Turns: turns, Thread: ThreadBytesBlob, InlineBytes: inline, Reads: 1}, nil)
	if err != nil {
		return Verdict{}, err
	}
	extra := blob.TotalBytes - ref.TotalBytes
	ratio := float64(extra) / float64(inline)
	fig := map[string]any{"referenceBytes": ref.TotalBytes, "inlineBytes": blob.TotalBytes, "checkpoints": blob.Checkpoints, "valueBytes": inline, "extraOverValue": ratio}
	var fails []string
	if ratio > 1.2 {
		fails = append(fails, fmt.Sprintf("the inline thread stores %.1f× the value more than the reference thread over %d checkpoints: it is stored more than once", ratio, blob.Checkpoints))
	}
	good := fmt.Sprintf("%d checkpoints: reference thread %d KB, with a 384 KB inline value %d KB (the value stored %.2f×, once)",
		blob.Checkpoints, ref.TotalBytes>>10, blob.TotalBytes>>10, ratio)
	return verdict(fig, good, fails), nil
}

func runDrill(ctx context.Context, env Env, points []worker.KillPoint, pick func(drill.Outcome) bool) (drill.Result, []drill.Outcome, error) {
	var ps []worker.Point
	for _, name := range points {
		p, ok := worker.Lookup(string(name))
		if !ok {
			return drill.Result{}, nil, fmt.Errorf("no kill point %q", name)
		}
		ps = append(ps, p)
	}
	res, err := drill.Run(ctx, drill.Config{Exe: env.Exe, Store: env.Spec, Env: env.Environ, Open: env.Open, Sources: env.Sources, Points: ps, Observe: env.Say})
	if err != nil {
		return res, nil, err
	}
	var out []drill.Outcome
	for _, o := range res.Outcomes {
		if pick(o) {
			out = append(out, o)
		}
	}
	return res, out, nil
}

func outcomeVerdict(outs []drill.Outcome, describe func(drill.Outcome) string) Verdict {
	fig := map[string]any{}
	var fails, lines []string
	for _, o := range outs {
		fig[o.Point] = o.Figures
		if !o.Passed {
			for _, c := range o.Checks {
				if !c.OK {
					fails = append(fails, fmt.Sprintf("%s: %s (%s)", o.Point, c.Name, c.Detail))
				}
			}
			continue
		}
		lines = append(lines, describe(o))
	}
	return verdict(fig, strings.Join(lines, "; "), fails)
}

func runKill(ctx context.Context, env Env) (Verdict, error) {
	// The script's kill by hand starts its thread anew.
	st, err := env.Open(ctx)
	if err != nil {
		return Verdict{}, err
	}
	err = fresh(ctx, st, ThreadKillByHand)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Verdict{}, err
	}
	var names []worker.KillPoint
	for _, p := range worker.Points {
		names = append(names, p.Name)
	}
	_, outs, err := runDrill(ctx, env, names, func(o drill.Outcome) bool { _, isPoint := worker.Lookup(o.Point); return isPoint })
	if err != nil {
		return Verdict{}, err
	}
	v := outcomeVerdict(outs, func(o drill.Outcome) string {
		return fmt.Sprintf("%s: pending %v, stored %v, redispatched %v", o.Point, orDash(o.Figures["pendingTasks"]), o.Figures["storedWrites"], o.Figures["redispatched"])
	})
	if v.Passed {
		v.Line = fmt.Sprintf("PASS: %d kill points, no duplicate work or side effect — %s", len(outs), strings.TrimPrefix(v.Line, "PASS: "))
	}
	return v, nil
}

func runSideEffect(ctx context.Context, env Env) (Verdict, error) {
	_, outs, err := runDrill(ctx, env, []worker.KillPoint{worker.AfterSideEffect}, func(o drill.Outcome) bool { return o.Point == string(worker.AfterSideEffect) })
	if err != nil {
		return Verdict{}, err
	}
	return outcomeVerdict(outs, func(o drill.Outcome) string {
		return fmt.Sprintf("killed after the draft was written, resumed: %s", checkDetail(o, "no duplicate draft"))
	}), nil
}

func runStale(ctx context.Context, env Env) (Verdict, error) {
	points := []worker.KillPoint{worker.MidFanout, worker.AwaitingApproval, worker.AfterSideEffect}
	_, outs, err := runDrill(ctx, env, points, func(o drill.Outcome) bool { return strings.HasPrefix(o.Point, "source-changed-at-") })
	if err != nil {
		return Verdict{}, err
	}
	return outcomeVerdict(outs, func(o drill.Outcome) string {
		at := strings.TrimPrefix(o.Point, "source-changed-at-")
		return fmt.Sprintf("changed at %s → %s", at, drill.SourceVerdicts[worker.KillPoint(at)])
	}), nil
}

func checkDetail(o drill.Outcome, name string) string {
	for _, c := range o.Checks {
		if c.Name == name {
			return c.Name + ": " + c.Detail
		}
	}
	return "passed"
}

func orDash(v any) any {
	if v == nil {
		return "–"
	}
	return v
}

func decodeMessages(stored []engine.StoredMessage) ([]ticket.Message, error) {
	out := make([]ticket.Message, 0, len(stored))
	for _, m := range stored {
		var msg ticket.Message
		if err := json.Unmarshal(m.Body, &msg); err != nil {
			return nil, fmt.Errorf("message #%d: %w", m.Index, err)
		}
		out = append(out, msg)
	}
	return out, nil
}
