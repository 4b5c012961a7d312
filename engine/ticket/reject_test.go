package ticket_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"rewind/engine"
	"rewind/engine/ticket"
	"rewind/store/sqlite"
)

// A rejected draft is marked in the conversation as never sent; with
// Redraft the reply is written again with the reason, as a new draft that
// waits at the gate, and approving it makes exactly that draft.
func TestRejectMarksTheReplyNotSentAndRedraftsWithTheReason(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, redraft := range []bool{false, true} {
		st, err := sqlite.Open(ctx, t.TempDir()+"/r.db")
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		e := draftEngine(t, st)
		res, err := e.Run(ctx, "r", draftTurn(sentence, grant(t, time.Hour, time.Now())), engine.RunConfig{})
		if err != nil || res.Status != engine.RunAwaitingApproval {
			t.Fatalf("run: %v, %+v", err, res)
		}
		first := pending(t, e, "r", res.Checkpoint)
		d := ticket.Decision{Reason: "give the refund window in days", By: "test", Redraft: redraft}
		if _, err := e.UpdateState(ctx, "r", res.Checkpoint, ticket.Approve(first.ID, d), ""); err != nil {
			t.Fatal(err)
		}
		res, err = e.Resume(ctx, "r", engine.RunConfig{})
		if err != nil {
			t.Fatal(err)
		}
		s := state(t, mustLatest(t, e, "r"))
		var note, revised *ticket.Message
		for i, m := range s.Messages {
			switch {
			case m.Speaker == ticket.NodeApproval:
				note = &s.Messages[i]
			case m.Speaker == ticket.NodeReply && strings.Contains(m.Content, "Revised: give the refund window in days"):
				revised = &s.Messages[i]
			}
		}
		if note == nil || !strings.Contains(note.Content, "not sent") || !strings.Contains(note.Content, "give the refund window in days") {
			t.Fatalf("redraft=%v: no note that the reply was not sent: %+v", redraft, s.Messages[len(s.Messages)-1])
		}
		if len(draftsOf(t, st, "r")) != 0 {
			t.Fatalf("redraft=%v: a rejected draft was created", redraft)
		}
		if !redraft {
			if res.Status != engine.RunDone || revised != nil {
				t.Fatalf("without redraft: status %s, revised reply %v", res.Status, revised)
			}
			continue
		}
		if res.Status != engine.RunAwaitingApproval || revised == nil || revised.Index <= note.Index {
			t.Fatalf("redraft: status %s, revised reply %+v after note %+v", res.Status, revised, note)
		}
		second := pending(t, e, "r", res.Checkpoint)
		if second.ID == first.ID || second.Payload != revised.Content {
			t.Fatalf("redraft: the new draft %s holds %q, want a new operation holding the revised reply", second.ID, second.Payload)
		}
		if got := s.Operations[first.ID].RedraftedBy; got != second.ID {
			t.Errorf("the rejected operation says it was redrafted by %q, want %q", got, second.ID)
		}
		answer(t, e, "r", res.Checkpoint)
		if res, err = e.Resume(ctx, "r", engine.RunConfig{}); err != nil || res.Status != engine.RunDone {
			t.Fatalf("approve the redraft: %v, %+v", err, res)
		}
		ds := draftsOf(t, st, "r")
		if len(ds) != 1 || ds[0].OperationID != second.ID || !strings.Contains(draftBody(t, ds[0])["body"], "Revised: give the refund window in days") {
			t.Fatalf("drafts after approving the redraft: %+v", ds)
		}
	}
}
