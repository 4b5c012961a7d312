package langgraph_test

import (
	"context"
	"reflect"
	"testing"

	"rewind/store/langgraph"
)

// LangGraph's special writes, stored at negative indexes, are named; an
// error's text and an interrupt's values are read out of them; the resume
// value a Command gave (the null task) is told from a task's writes.
func TestSpecialWritesNamed(t *testing.T) {
	t.Parallel()
	f := newLGFile(t)
	f.checkpoint("s", "", id(1), "", "msgpack", cp4(t, id(1),
		map[string]any{"branch:to:ask": nil}, map[string]any{"branch:to:ask": "2"}, map[string]any{}), meta("loop", 0))
	f.write("s", "", id(1), langgraph.NullTask, -4, "__resume__", "msgpack", mp(t, "go on"))
	f.write("s", "", id(1), "t-ask", -3, "__interrupt__", "json", []byte(`{"question": "old style, one value"}`))
	f.write("s", "", id(1), "t-ask", -2, "__scheduled__", "null", nil)
	f.write("s", "", id(1), "t-ask", -1, "__error__", "json", []byte(`{"message": "no", "name": "GraphInterrupt"}`))
	f.write("s", "", id(1), "t-ask", 0, "answer", "json", []byte(`"42"`))
	src := open(t, "sqlite:"+f.path)
	ws, err := src.Writes(context.Background(), langgraph.Chain{Thread: "s"}, id(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || !ws[0].Command || ws[0].Node != "" || ws[1].Command || ws[1].Node != "ask" {
		t.Fatalf("tasks %+v, want the command's resume, then the ask task", ws)
	}
	var kinds []string
	for _, w := range ws[1].Writes {
		kinds = append(kinds, w.Kind)
	}
	if want := []string{"interrupt", "scheduled", "error", ""}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds %q, want %q in index order", kinds, want)
	}
	if ws[0].Writes[0].Kind != "resume" || ws[0].Writes[0].Value != "go on" {
		t.Errorf("resume %+v", ws[0].Writes[0])
	}
	if ws[1].Error != "GraphInterrupt: no" || len(ws[1].Interrupts) != 1 ||
		!reflect.DeepEqual(ws[1].Interrupts[0].Value, map[string]any{"question": "old style, one value"}) {
		t.Errorf("error %q, interrupts %+v", ws[1].Error, ws[1].Interrupts)
	}
}
