package cli_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"rewind/cli"
	"rewind/cli/rewindbin"
	"rewind/store"
	"rewind/store/backend"
)

// answerStores are the stores the answer tests run on, through the binary.
var answerStores = cli.SharedStores("answers")

// eachAnswerStore runs fn on each answer store, all at once: a case
// mostly waits on the binary's processes (one after another, PostgreSQL's
// came after SQLite's).
func eachAnswerStore(t *testing.T, fn func(t *testing.T, spec func(*testing.T) string)) {
	t.Helper()
	rewindbin.Cases(t, slices.Sorted(maps.Keys(answerStores)), func(name string) string { return name }, func(t *testing.T, name string) {
		fn(t, answerStores[name])
	})
}

// draftCount is how many drafts thread has in the store spec names.
func draftCount(t *testing.T, spec, thread string) int {
	t.Helper()
	st, err := backend.Open(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ds, err := st.(store.Drafts).ListDrafts(t.Context(), thread)
	if err != nil {
		t.Fatal(err)
	}
	return len(ds)
}

// operationsOf is the operations of thread's newest checkpoint.
func operationsOf(t *testing.T, env []string, thread string) map[string]struct{ Status, Result string } {
	t.Helper()
	r := rewind(t, env, "show", thread, "--json")
	var shown struct {
		State struct {
			Operations map[string]struct{ Status, Result string }
		}
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &shown) != nil {
		t.Fatalf("show %s: %d %s %s", thread, r.code, r.stdout, r.stderr)
	}
	return shown.State.Operations
}

// Issue 32, item 2, as the issue ran it: a draft run waits at approval,
// `rewind cancel` ends it, and the next turn (no draft asked) ends done
// rather than at the gate for the cancelled draft; `approve` then finds
// nothing to approve, and no draft is made. On d1679bd the turn ended
// "awaiting approval" and approve created the draft.
func TestCancelledDraftDoesNotComeBack(t *testing.T) {
	t.Parallel()
	eachAnswerStore(t, func(t *testing.T, spec func(*testing.T) string) {
		env := []string{"REWIND_STORE=" + spec(t)}
		startDraft(t, env, "T")
		if r := rewind(t, env, "cancel", "T", "--reason", "the customer withdrew it"); r.code != 0 {
			t.Fatalf("cancel: %d %s %s", r.code, r.stdout, r.stderr)
		}
		for id, op := range operationsOf(t, env, "T") {
			if op.Status != "cancelled" || !strings.Contains(op.Result, "the customer withdrew it") {
				t.Fatalf("after cancel, operation %s is %+v: want cancelled with the reason", id, op)
			}
		}
		r := rewind(t, env, "run", "--thread", "T", "--input", "Thanks. When will it arrive?")
		if r.code != 0 || strings.Contains(r.stdout, "awaiting approval") || !strings.Contains(r.stdout, "done at checkpoint") {
			t.Fatalf("the turn after the cancel: %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		r = rewind(t, env, "approve", "T")
		if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "no approval is pending") || !strings.Contains(r.stderr, "see `rewind show T`") {
			t.Fatalf("approve after the turn: exit %d %q, want 1 and one line saying nothing waits and what to read", r.code, r.stderr)
		}
		if n := draftCount(t, env[0][len("REWIND_STORE="):], "T"); n != 0 {
			t.Fatalf("%d draft(s) made after the cancel", n)
		}
	})
}

// Issue 32, item 1: approve --edit approves only the draft the editor
// showed. Here the editor is a script that, while it is open, rejects the
// draft with --redraft from another process (a new draft waits now), then
// edits the text: the approval is refused in one line, nothing is
// approved, and the new draft still waits. On d1679bd the edited text was
// approved on the new draft's operation and its draft created.
func TestApproveEditRefusesADraftChangedWhileEditing(t *testing.T) {
	t.Parallel()
	eachAnswerStore(t, func(t *testing.T, spec func(*testing.T) string) {
		db := spec(t)
		env := []string{"REWIND_STORE=" + db}
		startDraft(t, env, "E")
		before := operationsOf(t, env, "E")
		editor := binary + " reject E --reason 'say the refund takes 5 days' --redraft >/dev/null 2>&1; sed -i s/Here/HERE/"
		r := rewind(t, append(env, "EDITOR="+editor), "approve", "E", "--edit")
		if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "changed since it was looked at") || !strings.Contains(r.stderr, "nothing was approved") {
			t.Fatalf("approve --edit across a redraft: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		ops := operationsOf(t, env, "E")
		waiting := 0
		for id, op := range ops {
			_, old := before[id]
			switch {
			case old && op.Status != "rejected", !old && op.Status != "awaiting_approval":
				t.Fatalf("operation %s is %+v after the refused approval", id, op)
			case !old:
				waiting++
			}
		}
		if waiting != 1 || draftCount(t, db, "E") != 0 {
			t.Fatalf("operations %+v, %d draft(s): want the redraft waiting, none made", ops, draftCount(t, db, "E"))
		}
	})
}
