package langgraph_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// ShallowPostgresSaver's tables (the newest checkpoint of each thread
// and namespace, its id in its document, one blob per channel) read as
// PostgresSaver's newest checkpoints read: the same threads and
// namespaces, one checkpoint each, its values and its writes; the source
// says what it keeps.
func TestShallowPostgresSaver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	full := lgtest.Dump(t, "postgres-python.sql")
	shallowURL := lgtest.Shallow(t, full)
	d, err := langgraph.Detect(ctx, shallowURL)
	if err != nil || !d.Shallow || d.Kind != langgraph.KindLangGraph || !strings.Contains(d.What(), "keeps only the newest checkpoint of each thread") {
		t.Fatalf("Detect = %+v, %v", d, err)
	}
	want, got := open(t, full), open(t, shallowURL)
	if a := got.About(); !strings.Contains(a.Schema, "ShallowPostgresSaver") || !a.ReadOnly || !strings.Contains(a.Status(), "only the newest checkpoint of each thread") {
		t.Errorf("about %+v", a)
	}
	wts, err := want.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gts, err := got.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(gts) != len(wts) || len(gts) == 0 {
		t.Fatalf("%d threads, want %d", len(gts), len(wts))
	}
	chains := 0
	for i, wt := range wts {
		gt := gts[i]
		if gt.ID != wt.ID || gt.Latest != wt.Latest || len(gt.Namespaces) != len(wt.Namespaces) {
			t.Errorf("thread %+v, want %+v", gt, wt)
			continue
		}
		for j, wn := range wt.Namespaces {
			gn := gt.Namespaces[j]
			if gn.NS != wn.NS || gn.Checkpoints != 1 || gn.Latest != wn.Latest {
				t.Errorf("namespace %+v, want %+v with one checkpoint", gn, wn)
				continue
			}
			chains++
			c := langgraph.Chain{Thread: wt.ID, NS: wn.NS}
			gh, wh := history(t, got, c), history(t, want, c)
			if len(gh) != 1 || gh[0].ID != wh[0].ID || gh[0].Parent != "" || gh[0].Step != wh[0].Step || js(t, gh[0].Next) != js(t, wh[0].Next) {
				t.Errorf("%s: history %s, want the newest of %s", c, js(t, gh), js(t, wh[:1]))
			}
			gc, err := got.Checkpoint(ctx, c, "")
			if err != nil {
				t.Fatal(err)
			}
			wc, err := want.Checkpoint(ctx, c, "")
			if err != nil {
				t.Fatal(err)
			}
			if js(t, gc.State()) != js(t, wc.State()) || gc.Damaged != "" {
				t.Errorf("%s: state %s, want %s", c, js(t, gc.State()), js(t, wc.State()))
			}
			gw, err := got.Writes(ctx, c, wc.ID)
			if err != nil {
				t.Fatal(err)
			}
			ww, err := want.Writes(ctx, c, wc.ID)
			if err != nil {
				t.Fatal(err)
			}
			if js(t, gw) != js(t, ww) {
				t.Errorf("%s: writes %s, want %s", c, js(t, gw), js(t, ww))
			}
		}
	}
	if chains < 3 {
		t.Errorf("only %d chains compared", chains)
	}
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// PostgresSaver keeps primitives inline in the checkpoint's jsonb, where
// an integer of any size stays exact (Python's 2**70+1): it reads with
// every digit, as LangGraph returns it, not as a rounded float.
func TestPostgresBigIntegersStayExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := lgtest.Dump(t, "postgres-python.sql")
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE checkpoints SET checkpoint = jsonb_set(checkpoint, '{channel_values}',
		coalesce(checkpoint -> 'channel_values', '{}') || '{"big": 1180591620717411303425, "neg": -1180591620717411303425, "u": 18446744073709551615}')
		WHERE thread_id = 't-main' AND checkpoint_ns = '' AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 't-main' AND checkpoint_ns = '')`); err != nil {
		t.Fatal(err)
	}
	cp, err := open(t, dbURL).Checkpoint(ctx, tMain, "")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]any{"big": json.Number("1180591620717411303425"), "neg": json.Number("-1180591620717411303425"), "u": uint64(18446744073709551615)} {
		if v, ok := cp.Value(name); !ok || v != want {
			t.Errorf("%s = %#v, want %#v", name, v, want)
		}
	}
	if b, _ := json.Marshal(cp.State()); !strings.Contains(string(b), `"big":1180591620717411303425`) {
		t.Errorf("state %s", b)
	}
}
