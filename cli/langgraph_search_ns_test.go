package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"rewind/store/langgraph/lgtest"
)

// TestSearchInASubgraphRun: `search --ns` scans the subgraph run's chain,
// not the root graph's. Python's review subgraph (sqlite-python.db) keeps
// its own messages channel: its summary is found on the run's newest
// checkpoint, which is the chain's head; without --ns, on a root one.
func TestSearchInASubgraphRun(t *testing.T) {
	spec := "sqlite:" + lgtest.Copy(t, "sqlite-python.db")
	const head = "1f1ed296-8a36-6d65-8001-628f89300b83" // review's newest, as `rewind threads` lists it
	type hits struct {
		NS   string `json:"ns"`
		Hits []struct {
			Checkpoint string `json:"checkpoint"`
			Head       bool   `json:"head"`
		} `json:"hits"`
	}
	search := func(args ...string) hits {
		t.Helper()
		code, out, stderr := run(t, append([]string{"search", "t-main", "summary", "--json", "--store", spec}, args...)...)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var h hits
		if err := json.Unmarshal([]byte(out), &h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	sub := search("--ns", "review:43a3")
	if !strings.HasPrefix(sub.NS, "review:43a3a66f") || len(sub.Hits) != 1 || sub.Hits[0].Checkpoint != head || !sub.Hits[0].Head {
		t.Errorf("--ns review:43a3: %+v, want one hit on %s, the run's head", sub, head)
	}
	root := search()
	if root.NS != "" || len(root.Hits) != 1 || root.Hits[0].Checkpoint == head {
		t.Errorf("root graph: %+v, want one hit on a root checkpoint", root)
	}
	if code, out, _ := run(t, "search", "t-main", "summary", "--ns", "review:43a3", "--store", spec); code != ExitOK || !strings.Contains(out, "in t-main --ns review:") {
		t.Errorf("text output names no namespace (exit %d):\n%s", code, out)
	}
}
