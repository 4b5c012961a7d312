package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"rewind/engine"
	"rewind/store/browse"
)

// unlessSealed runs read; a read that found documents sealed with a key
// this process was not given is no error: it gives what is sealed, for
// the command to say so beside what it could read. A wrong key stays an
// error (one line naming the key needed).
func unlessSealed(e *engine.Engine, read func() error) (*engine.Sealed, error) {
	err := read()
	if s, ok := e.SealedBy(err); ok && s.Given == "" {
		return &s, nil
	}
	return nil, err
}

// printSealedShow is show without the key: the checkpoint's listing (in
// the clear), then what is encrypted and how to read it.
func printSealedShow(ctx context.Context, e *engine.Engine, thread string, id int64, sealed engine.Sealed, asJSON bool, out io.Writer) error {
	before := int64(0)
	if id > 0 {
		before = id + 1
	}
	listed, err := e.History(ctx, thread, before, 1)
	if err != nil {
		return err
	}
	if len(listed) == 0 || id > 0 && listed[0].ID != id {
		return fmt.Errorf("checkpoint %d of thread %q: %s", id, named(thread), sealedText(sealed))
	}
	cp := listed[0]
	run := e.Graph().StatusOf(cp)
	if asJSON {
		return writeJSON(out, map[string]any{"checkpoint": cp, "runStatus": run, "encrypted": map[string]any{"channels": sealed.Channels, "keyId": sealed.KeyID}})
	}
	fmt.Fprint(out, checkpointHead(readChain{Chain: browse.Chain{Thread: thread}, rewind: true}, engine.Listing(thread, cp), fmt.Sprintf("schema v%d", cp.SchemaVersion)))
	fmt.Fprintf(out, "run %s as of @%d\n", run.Status, run.Checkpoint)
	fmt.Fprintln(out, sealedText(sealed))
	return nil
}

// latestOr is checkpoint id of thread, its latest when id is 0.
func latestOr(ctx context.Context, e *engine.Engine, thread string, id int64) (engine.Checkpoint, error) {
	if id == 0 {
		return e.Latest(ctx, thread)
	}
	return e.Get(ctx, thread, id)
}

// sealedText says what is sealed, naming the fix: "messages, summary are
// encrypted (key id k1); give --key-file to read them".
func sealedText(s engine.Sealed) string {
	verb := "are"
	if len(s.Channels) == 1 {
		verb = "is"
	}
	return fmt.Sprintf("%s %s encrypted (key id %s); give --key-file to read them", strings.Join(s.Channels, ", "), verb, s.KeyID)
}
