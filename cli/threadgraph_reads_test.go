package cli_test

import (
	"strings"
	"testing"
)

// `rewind events T`, `rewind stats T` and `rewind resume T --plan` read a
// research thread as the graph it records, as show, log and diff do: not
// through the ticket's graph, which called the thread corrupt ("write to
// unknown channel") and told the user to delete it.
func TestEventsAndStatsReadTheGraphAThreadRecords(t *testing.T) {
	t.Parallel()
	env, thread := forkedResearch(t)
	for _, args := range [][]string{{"events", thread}, {"events", thread, "3"}, {"stats", thread}, {"resume", thread, "--plan"}} {
		r := rewind(t, env, args...)
		if r.code != 0 || strings.Contains(r.stderr, "corrupt") || r.stdout == "" {
			t.Errorf("%s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
}

// What only the ticket's graph has, asked of a research thread whose
// checkpoint replays, is refused by name (exit 2): `approve --edit` (the
// ticket's approval gate; before, the editor's read called the thread
// corrupt and told the user to delete it) and `check fidelity` (the
// ticket's summary).
func TestTicketOnlyReadsOfAResearchThreadAreRefusedByName(t *testing.T) {
	t.Parallel()
	env, thread := forkedResearch(t)
	r := rewind(t, append(env, "EDITOR=true", "VISUAL=true"), "approve", thread, "--edit")
	if r.code != 2 || strings.Contains(r.stderr, "corrupt") || !strings.Contains(r.stderr, "approval gate") {
		t.Errorf("approve --edit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = rewind(t, env, "check", "fidelity", thread)
	if r.code != 2 || strings.Contains(r.stderr, "corrupt") || !strings.Contains(r.stderr, "graph research") {
		t.Errorf("check fidelity: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// `rewind show T --calls` rebuilds the ticket graph's requests only: on a
// research thread it said each call was "NOT the one sent" and listed the
// ticket's tools, a request the research graph never sent. It now says
// so (exit 2) and where the calls as stored are.
func TestShowCallsOfAResearchThreadIsNotTheTickets(t *testing.T) {
	t.Parallel()
	_, env := researchLesson(t)
	r := rewind(t, env, "show", "lesson:research", "3", "--calls")
	if r.code != 2 || strings.Contains(r.stdout, "lookup_order") || !strings.Contains(r.stderr, "rewind events lesson:research 3") {
		t.Errorf("show --calls of a research checkpoint: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A thread of a graph rewind does not build keeps its events readable, as
// README says (`log`, `runs` and `events` read its listings): reading a
// thread through the graph it records refuses only what rebuilds state.
func TestEventsOfAGraphRewindDoesNotBuildRead(t *testing.T) {
	t.Parallel()
	path, env := researchLesson(t)
	runMine(t, path)
	if r := rewind(t, env, "events", "mine-1"); r.code != 0 || !strings.Contains(r.stdout, "note") {
		t.Errorf("events of another program's graph: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// forkedResearch is the research lesson's thread with a branch from @2,
// whose checkpoints are read by replaying @2's writes, which only the
// research graph's channels take.
func forkedResearch(t *testing.T) (env []string, thread string) {
	t.Helper()
	_, env = researchLesson(t)
	thread = "lesson:research"
	if r := rewind(t, env, "fork", thread, "2", "--input", "what does fsync make durable?"); r.code != 0 {
		t.Fatalf("fork: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return env, thread
}

// What a research thread refuses of the ticket's options names the graph
// the thread records, not a --graph flag the user never typed ("--graph
// research: approve answers …" read as if the flag were the mistake).
func TestATicketOptionRefusedOnAResearchThreadNamesItsGraph(t *testing.T) {
	t.Parallel()
	_, env := researchLesson(t)
	const thread = "lesson:research"
	for _, args := range [][]string{
		{"approve", thread},
		{"approve", thread, "--edit"},
		{"reject", thread, "--reason", "no"},
		{"run", "--thread", thread, "--input", "more", "--draft", "--auth-ttl", "1h"},
	} {
		r := rewind(t, append(env, "EDITOR=true", "VISUAL=true"), args...)
		if r.code != 2 || !strings.Contains(r.stderr, "graph research") || strings.Contains(r.stderr, "--graph research") {
			t.Errorf("%s (no --graph given): exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
}
