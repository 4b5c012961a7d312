package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"rewind/store"
	"rewind/store/memory"
)

// TestScannedDocumentsAreEachRowsOwn: the reads keep the bytes the driver
// made for each document (owned): every row of a chain, and every body,
// is its own, as written, not another row's bytes nor the driver's reused
// buffer; an empty document (the chain's head mark) is not NULL.
func TestScannedDocumentsAreEachRowsOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sq, ref := open(t, filepath.Join(t.TempDir(), "rewind.db")), store.Store(memory.New())
	var msgs, blobs []string
	for id := int64(1); id <= 4; id++ {
		cp := store.Checkpoint{ThreadID: "t", ID: id, ParentID: id - 1, Base: id == 1,
			Meta:      fmt.Appendf(nil, `{"listing":%d,"pad":%q}`, id, strings.Repeat("m", int(id)*300)),
			State:     fmt.Appendf(nil, `{"state":%d,"pad":%q}`, id, strings.Repeat("s", int(id)*500)),
			CreatedAt: time.UnixMicro(1e15 + id).UTC()}
		if id == 3 { // the head snapshot, which row 4's chain stops at
			cp.Head = fmt.Appendf(nil, `{"head":%d,"pad":%q}`, id, strings.Repeat("h", 700))
		}
		for i := range 3 {
			body := fmt.Appendf(nil, `{"m":"%d.%d %s"}`, id, i, strings.Repeat("b", i*200))
			cp.Messages = append(cp.Messages, store.Message{Hash: store.ContentHash(body), Index: id*10 + int64(i), Body: body})
			blob := fmt.Appendf(nil, `"blob %d.%d %s"`, id, i, strings.Repeat("z", i*300))
			cp.Blobs = append(cp.Blobs, store.Blob{Hash: store.ContentHash(blob), Body: blob})
			cp.BlobRefs = append(cp.BlobRefs, cp.Blobs[i].Hash)
			msgs, blobs = append(msgs, cp.Messages[i].Hash), append(blobs, cp.Blobs[i].Hash)
		}
		for _, st := range []store.Store{sq, ref} {
			if err := st.PutCheckpoint(ctx, cp, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, id := range []int64{2, 3, 4} {
		got, err1 := sq.Chain(ctx, "t", id)
		want, err2 := ref.Chain(ctx, "t", id)
		if err := errors.Join(err1, err2); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("chain of %d: %v\n got %s\nwant %s", id, err, rowsText(got), rowsText(want))
		}
	}
	row, err1 := sq.Get(ctx, "t", 3)
	want, err2 := ref.Get(ctx, "t", 3)
	if err := errors.Join(err1, err2); err != nil || !reflect.DeepEqual(row, want) {
		t.Errorf("get 3: %v\n got %s\nwant %s", err, rowsText([]store.Checkpoint{row}), rowsText([]store.Checkpoint{want}))
	}
	gotM, gotB, err1 := sq.Bodies(ctx, "t", msgs, blobs)
	wantM, wantB, err2 := ref.Bodies(ctx, "t", msgs, blobs)
	byHash := func(a, b store.Message) int { return strings.Compare(a.Hash, b.Hash) }
	slices.SortFunc(gotM, byHash)
	slices.SortFunc(wantM, byHash)
	blobByHash := func(a, b store.Blob) int { return strings.Compare(a.Hash, b.Hash) }
	slices.SortFunc(gotB, blobByHash)
	slices.SortFunc(wantB, blobByHash)
	if err := errors.Join(err1, err2); err != nil || !reflect.DeepEqual(gotM, wantM) || !reflect.DeepEqual(gotB, wantB) || len(gotM) != 12 || len(gotB) != 12 {
		t.Errorf("bodies: %v\n got %v %v\nwant %v %v", err, gotM, gotB, wantM, wantB)
	}
}

func rowsText(rows []store.Checkpoint) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "\n  %d<-%d base %v meta %.20q state %.20q head %.20q (nil %v) refs %v", r.ID, r.ParentID, r.Base, r.Meta, r.State, r.Head, r.Head == nil, r.BlobRefs)
	}
	return b.String()
}
