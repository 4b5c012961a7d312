package cli

import (
	"context"
	"errors"
	"strings"
	"testing"

	"rewind/store/browse"
	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// unlisted is a source whose listings fail: every thread (Threads) and a
// chain's ids (IDs). What it still reads it reads through the source's
// one-thread and one-id lookups.
type unlisted struct{ browse.Source }

var errListed = errors.New("listed every thread or every id")

func (unlisted) Threads(context.Context) ([]browse.Thread, error) { return nil, errListed }

func (unlisted) IDs(context.Context, browse.Chain) ([]string, error) { return nil, errListed }

func (u unlisted) Thread(ctx context.Context, id string) (browse.Thread, bool, error) {
	return u.Source.(browse.ThreadFinder).Thread(ctx, id)
}

func (u unlisted) HasID(ctx context.Context, c browse.Chain, id string) (bool, error) {
	return u.Source.(browse.IDChecker).HasID(ctx, c, id)
}

// A thread and a checkpoint given whole are read alone: show, log,
// events and diff print what they print when every thread and id is
// listed, on a source whose listings fail; a prefix still resolves
// through the listing (and so fails here, naming it).
func TestLangGraphWholeIDsListNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, err := langgraph.Open(ctx, "sqlite:"+lgtest.Copy(t, "sqlite-python.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ts, err := src.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sub string
	for _, th := range ts {
		for _, n := range th.Namespaces {
			if th.ID == "t-main" && n.NS != "" {
				sub = n.NS
			}
		}
	}
	h, err := src.History(ctx, browse.Chain{Thread: "t-main"}, "", 0)
	if err != nil || len(h) < 4 || sub == "" {
		t.Fatalf("t-main: %d checkpoints, subgraph %q, %v: want a few and the review subgraph", len(h), sub, err)
	}
	a, b := h[len(h)-2].ID, h[1].ID
	type read func(src browse.Source, out *strings.Builder) error
	for name, r := range map[string]read{
		"show": func(s browse.Source, out *strings.Builder) error {
			return lgShow(ctx, s, "t-main", "", a, false, out)
		},
		"show --ns": func(s browse.Source, out *strings.Builder) error {
			return lgShow(ctx, s, "t-main", sub, "", true, out)
		},
		"show --message": func(s browse.Source, out *strings.Builder) error {
			return lgMessage(ctx, s, "t-main", "", "@"+b, 1, false, out)
		},
		"events": func(s browse.Source, out *strings.Builder) error {
			return lgEvents(ctx, s, "t-main", "", b, false, out)
		},
		"log --before": func(s browse.Source, out *strings.Builder) error {
			return runLog(ctx, reader{src: s}, "t-main", "", b, 3, false, false, out)
		},
		"diff": func(s browse.Source, out *strings.Builder) error {
			return runDiff(ctx, reader{src: s}, "t-main", "", a, b, false, out)
		},
	} {
		var want, got strings.Builder
		if err := r(src, &want); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := r(unlisted{src}, &got); err != nil {
			t.Errorf("%s of whole ids listed: %v", name, err)
		} else if got.String() != want.String() {
			t.Errorf("%s read alone prints\n%s\nwant what it prints listed:\n%s", name, got.String(), want.String())
		}
	}
	for _, c := range []struct{ thread, at string }{{"t-ma", a}, {"t-main", a[:len(a)-1]}} {
		if err := lgShow(ctx, unlisted{src}, c.thread, "", c.at, false, &strings.Builder{}); !errors.Is(err, errListed) {
			t.Errorf("show %s %s: %v, want the listing that resolves a prefix", c.thread, c.at, err)
		}
	}
}
