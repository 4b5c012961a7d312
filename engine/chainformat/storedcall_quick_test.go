package chainformat

import (
	"encoding/json"
	"testing"
	"time"
)

// slowCall is callOf by encoding/json alone.
func slowCall(data []byte) storedCall {
	var d struct {
		Role       string `json:"role"`
		Prompt     int    `json:"promptTokens"`
		Completion int    `json:"completionTokens"`
		Ms         int64  `json:"durationMs"`
		Err        string `json:"error"`
		Mode       string `json:"jsonMode"`
	}
	_ = json.Unmarshal(data, &d)
	return storedCall{Role: d.Role, Prompt: d.Prompt, Completion: d.Completion, Ms: d.Ms, Err: d.Err, Mode: d.Mode}
}

var callCases = []string{
	`{"completionTokens":12,"durationMs":0,"promptTokens":340,"role":"executor"}`,
	`{"completionTokens":1,"durationMs":3,"error":"boom: no","jsonMode":"schema","promptTokens":2,"role":"critic"}`,
	`{"role":"a","role":"b"}`, `{"Role":"a"}`, `{"r\u006fle":"a"}`, `{"role":"a\nb"}`, "{\"role\":\"a\x01b\"}", "{\"role\":\"\xff\"}",
	`{"durationMs":1.5,"role":"x"}`, `{"durationMs":1e3}`, `{"promptTokens":99999999999999999999,"role":"x"}`, `{"durationMs":-0}`, `{"durationMs":01}`,
	`{"role":"a",}`, `{"role":"a" }`, `{ "role":"a"}`, `{}`, `{"role":null}`, `{"role":1}`, `{"promptTokens":"1"}`, `{"other":1,"role":"a"}`, `[]`, ``, `{"role":"a"}x`,
}

func TestQuickCallReadsAsUnmarshal(t *testing.T) {
	for _, c := range callCases {
		checkQuickCall(t, []byte(c))
	}
	if _, ok := quickCall([]byte(callCases[1])); !ok {
		t.Errorf("quickCall(%s) took the slow path", callCases[1])
	}
}

func checkQuickCall(t *testing.T, data []byte) {
	t.Helper()
	got := callOf(Event{Data: data, At: time.UnixMicro(7)})
	want := slowCall(data)
	want.At = 7
	if got != want {
		t.Fatalf("callOf(%q) = %+v, want %+v", data, got, want)
	}
}

func FuzzQuickCall(f *testing.F) {
	for _, c := range callCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkQuickCall(t, data) })
}
