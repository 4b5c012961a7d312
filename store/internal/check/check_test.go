package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"rewind/store"
)

func TestName(t *testing.T) {
	long := strings.Repeat("a", 100)
	for _, tc := range []struct{ in, want string }{
		{"t", `"t"`},
		{`a"b`, `"a\"b"`},
		{long, `"` + long[:64] + `"…(100 bytes)`},
	} {
		if got := fmt.Sprint(Name(tc.in)); got != tc.want {
			t.Errorf("Name(%.10q…) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestRefusalsMatchErrInvalid(t *testing.T) {
	ok := store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{}`)}
	for name, err := range map[string]error{
		"empty thread":  Text("thread id", ""),
		"NUL":           Text("thread id", "a\x00"),
		"bad UTF-8":     JSON("state", []byte("\"\xff\"")),
		"not JSON":      JSON("state", []byte(`{`)),
		"empty doc":     JSON("state", nil),
		"too deep":      JSON("state", []byte(strings.Repeat("[", 10001)+strings.Repeat("]", 10001))),
		"huge number":   JSON("state", []byte(`1e131072`)),
		"neg epoch":     Epoch(-1),
		"bad writes":    Writes(store.TaskWrites{ThreadID: "t", CheckpointID: 1, TaskID: "x", Writes: []byte(`[`)}),
		"bad event":     func() error { _, err := Put(ok, []store.Event{{Type: ""}}); return err }(),
		"event dup seq": func() error { _, err := Put(ok, []store.Event{{Seq: 1, Type: "a"}, {Seq: 1, Type: "b"}}); return err }(),
	} {
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: %v, want an error matching ErrInvalid", name, err)
		} else if strings.Contains(err.Error(), store.ErrInvalid.Error()) {
			t.Errorf("%s: %q repeats the sentinel's text; say what is wrong instead", name, err)
		}
	}
	if _, err := Put(ok, nil); err != nil {
		t.Errorf("Put of a valid checkpoint: %v", err)
	}
}

func TestNumericLimits(t *testing.T) {
	for _, tc := range []struct {
		lit string
		ok  bool
	}{
		// The limits were found on PostgreSQL 15: '<lit>'::jsonb.
		{"1e131071", true}, {"1e131072", false},
		{"9.9999e131071", true}, {"10e131071", false}, {"-1e131071", true},
		{"1e-16383", true}, {"1e-16384", false}, {"1.0e-16383", false},
		{"0e-16383", true}, {"0e-16384", false}, {"0.0e-16383", false},
		{"0e1073741822", true}, {"0e1073741823", false}, {"1e1073741822", false},
		{"0.00000000000000000000000000000000000001e38", true}, {"1E+2", true},
		{"1e99999999999999999999", false},
		{"1" + strings.Repeat("0", 131071), true}, {"1" + strings.Repeat("0", 131072), false},
	} {
		err := JSON("n", []byte("["+tc.lit+"]"))
		if (err == nil) != tc.ok {
			t.Errorf("%.30s: %v, want accepted %v", tc.lit, err, tc.ok)
		}
	}
	// Digits and exponent letters inside strings are not numbers.
	if err := JSON("s", []byte(`{"1e131072":"1e131072 \"1e999999\""}`)); err != nil {
		t.Errorf("numbers in strings: %v", err)
	}
}

func TestSameJSON(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`1.5`, `1.50`, true},
		{`1.5`, `15e-1`, true},
		{`1.5`, `0.15E1`, true},
		{`100`, `1e2`, true},
		{`-0`, `0`, true},
		{`-0.0e9`, `0`, true},
		{`[1,2]`, ` [ 1 ,2 ] `, true},
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, true},
		{`{"a":1,"a":2}`, `{"a":2}`, true},
		{`{"b":1,"a":1,"b":2}`, `{"a":1,"b":2}`, true},
		{`"\u00e9"`, `"é"`, true},
		{`"\ud83d\ude00"`, `"😀"`, true},
		{`"\/\"\\\b\f\n\r\t"`, "\"/\\\"\\\\\\u0008\\u000c\\u000a\\u000d\\u0009\"", true},
		{`"\ud800"`, `"\uD800"`, true},
		{`"\ud800"`, `"\udc00"`, false},
		{`"\ud800"`, `"\ufffd"`, false},
		{`"\ud800"`, "\"\ufffd\"", false},
		{`"\ud800\ud800"`, `"\ud800"`, false},
		{`"\ud800x"`, `"\ud800"`, false},
		{`"\u0000"`, `""`, false},
		{`"e\u0301"`, `"é"`, false},
		{`1`, `"1"`, false},
		{`1.5`, `1.51`, false},
		{`-1`, `1`, false},
		{`123456789012345678901234567890`, `123456789012345678901234567891`, false},
		{`1e400`, `1e401`, false},
		{`9e9223372036854775807`, `90e9223372036854775806`, true},
		{`9e99999999999999999999`, `9e99999999999999999998`, false},
		{`10`, `1`, false},
		{`[1,2]`, `[2,1]`, false},
		{`[[1],2]`, `[[1,2]]`, false},
		{`{"a":null}`, `{}`, false},
		{`{"a":1,"a":2}`, `{"a":1}`, false},
		{`{"ab":1}`, `{"a":1,"b":1}`, false},
		{`{"a":"b"}`, `{"a":"","b":""}`, false},
		{`null`, `false`, false},
		{`true`, `false`, false},
		{`{}`, `[]`, false},
		{`""`, `[]`, false},
		// Not JSON: the same only byte for byte, and never a panic.
		{`{`, `{`, true},
		{`{`, `{ `, false},
		{`[1,]`, `[1]`, false},
		{`"\u12"`, `"\u0012"`, false},
		{`"\x"`, `"x"`, false},
		{`1 2`, `1`, false},
		{`{"a" 1}`, `{"a":1}`, false},
		{`tru`, `true`, false},
		{``, `null`, false},
	} {
		if got := SameJSON([]byte(tc.a), []byte(tc.b)); got != tc.same {
			t.Errorf("SameJSON(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
		if got := SameJSON([]byte(tc.b), []byte(tc.a)); got != tc.same {
			t.Errorf("SameJSON(%s, %s) = %v, want %v", tc.b, tc.a, got, tc.same)
		}
	}
}

// FuzzCanonical: every valid document canonicalises, equals itself
// reformatted, and bad input never panics.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.50,-0e3,"\ud800",{"b":null}],"a":true}`, `"\ud83d\ude00\u0000"`, `[]`, `{`, `1e99999999999999999999`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		canon, ok := Canonical(doc)
		if !json.Valid(doc) {
			return
		}
		if !ok {
			t.Fatalf("valid %q does not canonicalise", doc)
		}
		var b bytes.Buffer
		if err := json.Indent(&b, doc, "", "  "); err != nil {
			t.Fatal(err)
		}
		if again, _ := Canonical(b.Bytes()); !bytes.Equal(canon, again) {
			t.Fatalf("%q and its indented form differ", doc)
		}
	})
}

func TestFenced(t *testing.T) {
	for _, tc := range []struct {
		epoch, current, issued int64
		want                   error // nil, ErrFenced or ErrInvalid
	}{
		{0, 0, 0, nil},
		{0, 5, 9, nil},
		{5, 5, 9, nil},
		{4, 5, 9, store.ErrFenced},        // taken over
		{5, 0, 9, store.ErrFenced},        // deleted since (or never fenced)
		{9, 0, 9, store.ErrFenced},        // the newest epoch, of a deleted thread
		{10, 0, 9, store.ErrInvalid},      // never handed out
		{6, 5, 9, store.ErrInvalid},       // handed out, but not for this thread
		{1 << 40, 5, 9, store.ErrInvalid}, // never handed out
	} {
		err := Fenced(strings.Repeat("t", 100), tc.epoch, tc.current, tc.issued)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("Fenced(epoch %d, current %d, issued %d) = %v, want %v", tc.epoch, tc.current, tc.issued, err, tc.want)
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("Fenced's message is %d bytes: the thread id must be clipped", len(err.Error()))
		}
	}
}

func TestNameVerbs(t *testing.T) {
	long := strings.Repeat("é", 40) // 80 bytes: the cut must not split a character
	for _, tc := range []struct {
		format string
		in     string
		want   string
	}{
		{"%q", "t\n", `"t\n"`},
		{"%v", "t", `"t"`},
		{"%s", "t", `t`},
		{"%q", long, `"` + strings.Repeat("é", 32) + `"…(80 bytes)`},
		{"%s", long, strings.Repeat("é", 32) + `…(80 bytes)`},
		{"%s", strings.Repeat("a", 63) + "é", strings.Repeat("a", 63) + `…(65 bytes)`},
	} {
		if got := fmt.Sprintf(tc.format, Name(tc.in)); got != tc.want {
			t.Errorf("Sprintf(%s, Name(%.10q…)) = %s, want %s", tc.format, tc.in, got, tc.want)
		}
	}
}
