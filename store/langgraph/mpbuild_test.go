package langgraph_test

import (
	"testing"

	"rewind/store/langgraph/lgtest"
)

// The tests' msgpack builder is lgtest's, under short names.
type (
	ext = lgtest.Ext
	bin = lgtest.Bin
	raw = lgtest.Raw
)

func mp(t testing.TB, v any) []byte {
	t.Helper()
	return lgtest.MP(t, v)
}
