package langgraph_test

import (
	"context"
	"testing"

	"rewind/store/langgraph"
)

// The fixtures (copies of the SQLite files, the PostgreSQL dumps loaded into
// databases of their own) come from rewind/store/langgraph/lgtest.

// open opens a spec as a LangGraph source, closed when the test ends.
func open(t testing.TB, spec string) langgraph.Source {
	t.Helper()
	src, err := langgraph.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}
