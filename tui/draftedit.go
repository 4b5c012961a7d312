package tui

import (
	"context"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"

	"rewind/engine/worker"
	"rewind/tui/termtext"
)

// Edit a draft before approving it: e in the approval dialog opens the
// draft in $EDITOR; approving then sends the edited text, which the
// operation records (worker approve --payload-file, or Request.Payload in
// this process).

// answerEdited runs `rewind worker approve --payload-file F T` with flags;
// the file is removed when the worker has ended.
func (w *workerRunner) answerEdited(ctx context.Context, thread, payload string, flags []string, rs RunSettings) (RunHandle, error) {
	f, err := os.CreateTemp("", "rewind-draft-*.txt")
	if err != nil {
		return nil, fmt.Errorf("write the edited draft for the worker: %w", err)
	}
	_, err = f.WriteString(payload)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return nil, fmt.Errorf("write the edited draft for the worker: %w", err)
	}
	h, err := w.start(ctx, w.args(worker.OpApprove, rs, append(flags, "--payload-file="+f.Name()), thread))
	if err != nil {
		_ = os.Remove(f.Name())
		return nil, err
	}
	wr := h.(*workerRun)
	fr := &fileRun{workerRun: wr, out: make(chan RunUpdate)}
	go func() {
		defer close(fr.out)
		for u := range wr.Updates() {
			if u.Done {
				_ = os.Remove(f.Name())
			}
			fr.out <- u
		}
	}()
	return fr, nil
}

// fileRun is a worker run whose input file goes when it ends.
type fileRun struct {
	*workerRun
	out chan RunUpdate
}

func (f *fileRun) Updates() <-chan RunUpdate { return f.out }

type (
	// draftFileMsg: the draft is in its file, ready for the editor.
	draftFileMsg struct {
		dlg  *approvalDialog
		path string
		err  error
	}
	// draftEditedMsg: the editor closed.
	draftEditedMsg struct {
		dlg  *approvalDialog
		path string
		err  error
	}
	// draftReadMsg: the edited text, read back.
	draftReadMsg struct {
		dlg  *approvalDialog
		text string
		err  error
	}
)

func (draftFileMsg) parityMsg()   {}
func (draftEditedMsg) parityMsg() {}
func (draftReadMsg) parityMsg()   {}

// editDraft writes the draft (as edited so far) to a file, in a Cmd.
func editDraft(a *approvalDialog) tea.Cmd {
	text := a.payload()
	return func() tea.Msg {
		f, err := os.CreateTemp("", "rewind-draft-*.txt")
		if err != nil {
			return draftFileMsg{dlg: a, err: fmt.Errorf("make a file to edit the draft in: %w", err)}
		}
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = os.Remove(f.Name())
			return draftFileMsg{dlg: a, err: fmt.Errorf("write the draft to %s: %w", f.Name(), err)}
		}
		return draftFileMsg{dlg: a, path: f.Name()}
	}
}

// readDraft reads the edited draft back and removes its file, in a Cmd.
func readDraft(a *approvalDialog, path string) tea.Cmd {
	return func() tea.Msg {
		data, err := os.ReadFile(path)
		_ = os.Remove(path)
		if err != nil {
			return draftReadMsg{dlg: a, err: fmt.Errorf("read the edited draft from %s: %w", path, err)}
		}
		text := strings.TrimRight(string(data), "\n")
		switch {
		case strings.TrimSpace(text) == "":
			err = fmt.Errorf("the edited draft is empty: kept the draft as it was (reject it with n instead)")
		case !utf8.ValidString(text):
			err = fmt.Errorf("the edited draft is not UTF-8 text: kept the draft as it was")
		case len(text) > termtext.MaxInput:
			err = fmt.Errorf("the edited draft is longer than %s: kept the draft as it was; shorten it", termtext.Size(termtext.MaxInput))
		}
		return draftReadMsg{dlg: a, text: text, err: err}
	}
}

// draftMsg is a step of a draft's edit, for the approval dialog it
// edits (the root routes it there: onDraftMsg).
type draftMsg interface{ of() *approvalDialog }

func (m draftFileMsg) of() *approvalDialog   { return m.dlg }
func (m draftEditedMsg) of() *approvalDialog { return m.dlg }
func (m draftReadMsg) of() *approvalDialog   { return m.dlg }

// onDraft carries a draft edit on: the editor on the draft's file, then
// the text read back, which the dialog shows (the status line says how
// it went).
func (a *approvalDialog) onDraft(msg draftMsg) tea.Cmd {
	switch msg := msg.(type) {
	case draftFileMsg:
		if msg.err != nil {
			return flash(msg.err.Error(), true)
		}
		path := msg.path
		return tea.ExecProcess(editorCommand(path), func(err error) tea.Msg { return draftEditedMsg{dlg: a, path: path, err: err} })
	case draftEditedMsg:
		if msg.err != nil {
			return tea.Batch(func() tea.Msg { _ = os.Remove(msg.path); return nil },
				flash(fmt.Sprintf("the editor failed (%v): the draft is as it was", msg.err), true))
		}
		return readDraft(a, msg.path)
	case draftReadMsg:
		if msg.err != nil {
			return flash(msg.err.Error(), true)
		}
		if msg.text == a.payload() {
			return flash("the draft is unchanged", false)
		}
		a.setEdited(msg.text)
		return flash("draft edited: y approves it as edited (the operation records the edited text)", false)
	}
	return nil
}
