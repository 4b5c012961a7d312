package chainformat

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"rewind/engine/internal/jsonstr"
)

// plainByte is jsonstr.Esc's ASCII that encoding/json writes as it is.
func TestPlainBytesAreEscs(t *testing.T) {
	t.Parallel()
	for b := range len(jsonstr.Esc) {
		if plain := jsonstr.Esc[b] == string(rune(b)) && b != '"' && b != '\\'; plainByte[b] != plain {
			t.Errorf("plainByte[%#x] = %v, want %v", b, plainByte[b], plain)
		}
	}
	for b := len(jsonstr.Esc); b < len(plainByte); b++ {
		if plainByte[b] {
			t.Errorf("plainByte[%#x] is set: a byte past ASCII is never plain", b)
		}
	}
}

// marshalDecoded is what canonValue must equal: raw decoded as the list
// reducers decode (UseNumber, into any) and marshalled again.
func marshalDecoded(raw []byte) ([]byte, bool) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&v) != nil || d.More() {
		return nil, false
	}
	if _, err := d.Token(); err == nil { // trailing data
		return nil, false
	}
	b, err := json.Marshal(v)
	return b, err == nil
}

var canonCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+10`, `-12.25E-3`, `""`,
	` { "b" : 1 , "a" : [ 1 , 2 ] } `,
	`{"b":1,"a":2,"b":3}`,                        // duplicate: the last wins
	`{"b":{"y":1,"x":{"q":[],"p":{}}},"a":null}`, // nested unsorted
	`{"content":"calling lookup_order({\"order\":\"SO1\"})","role":"assistant"}`,
	`"<a href=\"x\">&amp;</a>"`, `"\u003c\u003e\u0026"`, `"\u003C"`, `"\/"`, `"/"`,
	`"tab\there\nline\r\b\f\u0001\u001f\u007f"`, "\"raw \x7f del\"",
	`"\u00e9 é \ud83d\ude00 😀"`, `"\ud800"`, `"\ufffd"`, "\"\xff bad\"", "\"\xe2\x80\xa8 \u2028 \u2029\"",
	`{"\u0062":1,"a":2}`, `{"a\"b":1,"a":2,"a#":3}`, `{"é":1,"e":2,"z":3}`, `{"<":1,"&":2}`,
	`[1,"2",{"3":[4,{"5":6}]}]`, `{"index":1.0,"x":100000000000000000000000}`,
	// not JSON, or not one value: canonValue must say so
	`{"a":1,}`, `[1,]`, `{"a" 1}`, `{a:1}`, `01`, `1.`, `.5`, `1e`, `-`, `tru`, `nul`, `"abc`, "\"a\x01b\"", `"\x"`, `"\u12"`,
	`[1] [2]`, `{"a":1} x`, `[1}`, `{"a":1]`, ``, ` `,
}

func TestCanonValueIsMarshalOfDecoded(t *testing.T) {
	for _, c := range canonCases {
		checkCanon(t, []byte(c))
	}
	deep := strings.Repeat("[", canonDepth+5) + strings.Repeat("]", canonDepth+5)
	if _, ok := canonValue([]byte(deep)); ok {
		t.Errorf("canonValue followed %d levels", canonDepth+5)
	}
}

func checkCanon(t *testing.T, raw []byte) {
	t.Helper()
	want, wantOK := marshalDecoded(raw)
	got, ok := canonValue(raw)
	if !ok {
		return // the slow path decides
	}
	if !wantOK {
		t.Fatalf("canonValue(%q) = %q, but it does not decode as one value", raw, got)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("canonValue(%q) = %q, want %q", raw, got, want)
	}
}

// Of these, canonValue must give the form itself (no slow path).
func TestCanonValueIsCertain(t *testing.T) {
	for _, c := range []string{`{"b":1,"a":2}`, `{"content":"calling f({\"order\":\"SO1\"})\n<x>","speaker":"executor[t-1]"}`, `"é 😀"`} {
		if _, ok := canonValue([]byte(c)); !ok {
			t.Errorf("canonValue(%q) took the slow path", c)
		}
	}
}

func FuzzCanonValue(f *testing.F) {
	for _, c := range canonCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkCanon(t, raw) })
}

func TestCanonObjectsIsDecodeList(t *testing.T) {
	for _, c := range []string{``, `null`, ` null `, `[]`, `[ ]`, `[{}]`, `[{"b":1,"a":2},{"a":{"d":1,"c":2}}]`, `[{"a":1},null]`, `[1]`, `[{"a":1}] x`, `{"a":1}`, `[{"a":1},]`} {
		checkCanonObjects(t, []byte(c))
	}
}

func checkCanonObjects(t *testing.T, raw []byte) {
	t.Helper()
	items, ok := canonObjects(raw)
	if !ok {
		return
	}
	old, err := decodeList(raw)
	if err != nil {
		t.Fatalf("canonObjects(%q) read %d items, decodeList: %v", raw, len(items), err)
	}
	if len(old) != len(items) {
		t.Fatalf("canonObjects(%q) read %d items, decodeList %d", raw, len(items), len(old))
	}
	for i, it := range old {
		if it == nil {
			t.Fatalf("canonObjects(%q) read item %d, which decodes as null", raw, i)
		}
		want, _ := json.Marshal(it)
		if !bytes.Equal(items[i], want) {
			t.Fatalf("canonObjects(%q) item %d = %q, want %q", raw, i, items[i], want)
		}
	}
}

func FuzzCanonObjects(f *testing.F) {
	for _, c := range canonCases {
		f.Add([]byte("[" + c + "]"))
		f.Add([]byte("[" + c + "," + c + "]"))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkCanonObjects(t, raw) })
}

// The list reducers as they were before canonEnc: what they write is part
// of the schema, so the fast paths must write the same bytes and fail the
// same way.
func refIndexedAppend(field string) Reducer {
	return func(current, write json.RawMessage) (json.RawMessage, error) {
		if list, ok := isReplace(write); ok {
			items, err := decodeList(list)
			if err != nil {
				return nil, err
			}
			if items == nil {
				items = []map[string]any{}
			}
			return json.Marshal(items)
		}
		old, err := splitList(current)
		if err != nil {
			return nil, fmt.Errorf("want a list: %w", err)
		}
		add, err := decodeList(write)
		if err != nil {
			return nil, err
		}
		next := int64(1)
		if n := len(old); n > 0 {
			if last := bytes.TrimSpace(old[n-1]); len(last) == 0 || last[0] != '{' {
				return nil, fmt.Errorf("last item is not an object")
			}
			if v, ok := topField(old[n-1], field); ok {
				if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
					next = i + 1
				}
			}
		}
		var out bytes.Buffer
		out.WriteByte('[')
		for i, it := range old {
			if i > 0 {
				out.WriteByte(',')
			}
			out.Write(it)
		}
		for i, it := range add {
			if _, has := it[field]; !has {
				it[field] = next
			} else if v, ok := it[field].(json.Number); ok {
				if i, err := v.Int64(); err == nil && i >= next {
					next = i
				}
			}
			next++
			b, err := json.Marshal(it)
			if err != nil {
				return nil, err
			}
			if len(old) > 0 || i > 0 {
				out.WriteByte(',')
			}
			out.Write(b)
		}
		out.WriteByte(']')
		return out.Bytes(), nil
	}
}

func refMergeByID(field string) Reducer {
	return func(current, write json.RawMessage) (json.RawMessage, error) {
		if list, ok := isReplace(write); ok {
			items, err := decodeList(list)
			if err != nil {
				return nil, err
			}
			if items == nil {
				items = []map[string]any{}
			}
			return json.Marshal(items)
		}
		old, err := decodeList(current)
		if err != nil {
			return nil, err
		}
		add, err := decodeList(write)
		if err != nil {
			return nil, err
		}
		pos := map[string]int{}
		for i, it := range old {
			pos[fmt.Sprint(it[field])] = i
		}
		for _, it := range add {
			id, ok := it[field]
			if !ok {
				return nil, fmt.Errorf("item without %q", field)
			}
			if i, seen := pos[fmt.Sprint(id)]; seen {
				old[i] = it
				continue
			}
			pos[fmt.Sprint(id)] = len(old)
			old = append(old, it)
		}
		if old == nil {
			old = []map[string]any{}
		}
		return json.Marshal(old)
	}
}

// reduceOutcome is what a reducer did: its bytes, its error, or a panic.
func reduceOutcome(r Reducer, current, write []byte) (out string) {
	defer func() {
		if p := recover(); p != nil {
			out = fmt.Sprint("panic: ", p)
		}
	}()
	b, err := r(current, write)
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok: " + string(b)
}

var reducerCases = [][2]string{
	{``, `[{"role":"user","content":"hi <there> & \"you\""}]`},
	{`[{"index":1,"role":"user"}]`, `[{"role":"assistant","speaker":"executor[t-1]","toolCall":{"name":"f","id":"c1","args":"{\"order\":\"SO1\"}"}},{"index":7,"z":1},{"index":"x"},{"index":2.5}]`},
	{`[{"index":1}]`, `[{"index":1}]`},
	{`[{"index":3}]`, `{"replace":[{"b":1,"a":2,"index":1}]}`},
	{`[{"index":3}]`, `{"replace":null}`},
	{`null`, `null`},
	{`[]`, `[]`},
	{`[{"id":"t-1","status":"pending","goal":"g"},{"id":2},{"x":1}]`, `[{"id":"t-1","status":"done","result":"r"},{"id":"2","new":true},{"id":null},{"id":3}]`},
	{`[{"id":"t-1"}]`, `[{"noid":1}]`},
	{`[{"id":{"a":1}}]`, `[{"id":{"a":1},"v":2}]`},
	{`[{"id":"a\u0062"}]`, `[{"id":"ab","v":2},{"\u0069d":"q"},{"i\u0064":"ab","v":3}]`},
	{`[{"id":"t","b":1,"b":2}]`, `[{"b":3,"id":"t","b":4}]`},
	{`[{"index":1}]`, `[null]`},
	{`[{"index":1}]`, `[1]`},
	{`[{"index":1}] `, `[{"a":1}] x`},
	{`[1]`, `[{"a":1}]`},
	{`{`, `[{"a":1}]`},
	{`[{"index":1}]`, `[{"a":1},]`},
	{`[{"index":9223372036854775807}]`, `[{"a":1}]`},
	{`[{"index":1}]`, `[{},{"a":{"z":1,"y":[{"q":1,"p":2}]}},{"zzz":1},{"aaa":1},{"index":-5},{"index":100}]`},
}

func TestListReducersWriteAsBefore(t *testing.T) {
	for _, c := range reducerCases {
		checkReducers(t, []byte(c[0]), []byte(c[1]))
	}
}

func checkReducers(t *testing.T, current, write []byte) {
	t.Helper()
	for _, r := range []struct {
		name      string
		new, prev Reducer
	}{
		{"IndexedAppend", IndexedAppend("index"), refIndexedAppend("index")},
		{"MergeByID", MergeByID("id"), refMergeByID("id")},
	} {
		got, want := reduceOutcome(r.new, current, write), reduceOutcome(r.prev, current, write)
		if got != want {
			t.Fatalf("%s(%q, %q):\n got %s\nwant %s", r.name, current, write, got, want)
		}
	}
}

func FuzzListReducers(f *testing.F) {
	for _, c := range reducerCases {
		f.Add([]byte(c[0]), []byte(c[1]))
	}
	f.Fuzz(func(t *testing.T, current, write []byte) { checkReducers(t, current, write) })
}

// patchKeyed must write what indexItems and patchWrite wrote, write after
// write.
func checkPatchKeyed(t *testing.T, parent []byte, writes ...[]byte) {
	t.Helper()
	ref := indexItems(parent, "id")
	citems, items := map[string]canonKeyed{}, map[string]map[string]map[string]any{}
	for i, w := range writes {
		want := patchWrite(ref, w, "id")
		got := patchKeyed(citems, items, parent, Write{Channel: "subtasks", Value: w}, "id")
		if !bytes.Equal(got, want) {
			t.Fatalf("parent %q, write %d %q:\n got %s\nwant %s", parent, i, w, got, want)
		}
	}
}

var patchCases = [][]string{
	{`[{"id":"t-1","status":"pending","goal":"find the order SO1 and its status"},{"id":"t-2","status":"pending","goal":"g2"}]`,
		`[{"id":"t-1","status":"done","goal":"find the order SO1 and its status","result":"it is late"}]`,
		`[{"id":"t-1","status":"approved","goal":"find the order SO1 and its status"},{"id":"t-3","goal":"new"}]`},
	{`[{"id":1,"a":[1,2],"b":{"y":1,"x":2}}]`, `[{"id":"1","a":[1,2],"b":{"x":2,"y":1},"c":null}]`, `{"replace":[{"id":1,"q":1}]}`, `[{"id":1,"q":2,"zzzzzzzzzzzzzzzzzzzzzzzzz":1}]`},
	{`[{"id":"a","v":1}]`, `[{"v":2},{"v":3},{"id":null,"v":4}]`},
	{`[{"id":"a","k\u00e9y":"<x>","v":"1"}]`, `[{"id":"a","kéy":"<x>","v":1}]`},
	{`[{"id":{"o":1}}]`, `[{"id":{"o":1},"v":1}]`},
	{`garbage`, `[{"id":"a","v":1}]`, `[{"id":"a","v":2,"w":"a long enough field to make a patch pay"}]`},
	{`[{"id":"a","v":1}]`, `[{"id":"a","v":1}] x`, `[1]`, `[]`, `null`, `{"replace":null}`},
	{`[{"id":"a","v":1,"v":2}]`, `[{"id":"a","v":2,"long":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}]`},
}

func TestPatchKeyedIsPatchWrite(t *testing.T) {
	for _, c := range patchCases {
		var ws [][]byte
		for _, w := range c[1:] {
			ws = append(ws, []byte(w))
		}
		checkPatchKeyed(t, []byte(c[0]), ws...)
	}
}

func FuzzPatchKeyed(f *testing.F) {
	for _, c := range patchCases {
		w2 := c[len(c)-1]
		f.Add([]byte(c[0]), []byte(c[1]), []byte(w2))
	}
	f.Fuzz(func(t *testing.T, parent, w1, w2 []byte) { checkPatchKeyed(t, parent, w1, w2) })
}

// refIsReplace is isReplace without its quick refusal.
func refIsReplace(write json.RawMessage) (json.RawMessage, bool) {
	w := bytes.TrimSpace(write)
	if len(w) == 0 || w[0] != '{' {
		return nil, false
	}
	var r struct {
		Replace json.RawMessage `json:"replace"`
	}
	if err := json.Unmarshal(w, &r); err != nil || r.Replace == nil {
		return nil, false
	}
	return r.Replace, true
}

var replaceCases = []string{`{"replace":[1]}`, `{"REPLACE":[1]}`, `{"rEpLaCe":null}`, `{"r\u0065place":[2]}`, `{"$u":[{"a":"replace"}]}`, `{"x":1}`, `{"replac":1}`, `[{"replace":1}]`, ` {"Replace" : {} } `, `{"replace":1,"replace":2}`, "{\"repl\u0430ce\":1}"}

func TestIsReplaceAsUnmarshal(t *testing.T) {
	for _, c := range replaceCases {
		checkIsReplace(t, []byte(c))
	}
}

func checkIsReplace(t *testing.T, w []byte) {
	t.Helper()
	got, ok := isReplace(w)
	want, wantOK := refIsReplace(w)
	if ok != wantOK || !bytes.Equal(got, want) {
		t.Fatalf("isReplace(%q) = %s, %v; want %s, %v", w, got, ok, want, wantOK)
	}
}

func FuzzIsReplace(f *testing.F) {
	for _, c := range replaceCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, w []byte) { checkIsReplace(t, w) })
}

// canonEnd accepts a value only when it is canonEnc's output for it.
func checkCanonEnd(t *testing.T, raw []byte) {
	t.Helper()
	if end := canonEnd(raw, 0, 0); end == len(raw) {
		got, ok := canonValue(raw)
		if !ok || !bytes.Equal(got, raw) {
			t.Fatalf("canonEnd accepts %q, whose form is %q (%v)", raw, got, ok)
		}
	}
}

func FuzzCanonEnd(f *testing.F) {
	for _, c := range canonCases {
		f.Add([]byte(c))
		if v, ok := canonValue([]byte(c)); ok {
			f.Add(v)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkCanonEnd(t, raw) })
}

func TestCanonEndTakesCanonicalForms(t *testing.T) {
	for _, c := range canonCases {
		checkCanonEnd(t, []byte(c))
		if v, ok := canonValue([]byte(c)); ok && !bytes.Contains(v, []byte(`\`)) {
			if end := canonEnd(v, 0, 0); end != len(v) && !bytes.Contains(v, []byte(`{"\`)) {
				t.Errorf("canonEnd refuses the canonical %q", v)
			}
		}
	}
}

// refWalkList is walkList before strings were skipped by IndexByte.
func refWalkList(raw []byte, item func([]byte)) error {
	i := skipSpace(raw, 0)
	if i == len(raw) || string(raw[i:]) == "null" || string(trimRight(raw[i:])) == "null" {
		return nil
	}
	if raw[i] != '[' {
		return errNotList
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return nil
	}
	depth, start, inString := 0, i, false
	for ; i < len(raw); i++ {
		c := raw[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}':
			depth--
		case ']':
			if depth == 0 {
				item(trimRight(raw[start:i]))
				return nil
			}
			depth--
		case ',':
			if depth == 0 {
				item(trimRight(raw[start:i]))
				start = skipSpace(raw, i+1)
			}
		}
	}
	return errNotList
}

func checkWalkList(t *testing.T, raw []byte) {
	t.Helper()
	var got, want [][]byte
	err := walkList(raw, func(b []byte) { got = append(got, b) })
	wantErr := refWalkList(raw, func(b []byte) { want = append(want, b) })
	if (err == nil) != (wantErr == nil) || !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("walkList(%q) = %q, %v; want %q, %v", raw, got, err, want, wantErr)
	}
}

func FuzzWalkList(f *testing.F) {
	for _, c := range canonCases {
		f.Add([]byte("[" + c + "," + c + "]"))
	}
	f.Add([]byte(`[{"a":"x\"]","b":"\\"},"q"]`))
	f.Fuzz(func(t *testing.T, raw []byte) { checkWalkList(t, raw) })
}

// zipBlob with a reused compressor, and remembered, zips as a new one does.
func TestZipBlobAsNewWriter(t *testing.T) {
	for _, n := range []int{blobMin, 3000, 20000} {
		body, _ := json.Marshal(strings.Repeat("the parcel of SO20260001 is at the Utrecht hub; ", n/48+1))
		var z bytes.Buffer
		w, _ := flate.NewWriter(&z, flate.BestCompression)
		_, _ = w.Write(body)
		_ = w.Close()
		want, _ := json.Marshal(map[string]string{"$z": base64.StdEncoding.EncodeToString(z.Bytes())})
		if len(want) > len(body)*3/4 {
			want = body
		}
		for range 3 {
			if got := zipBlob(body); !bytes.Equal(got, want) {
				t.Fatalf("zipBlob of %d bytes = %.60s…, want %.60s…", len(body), got, want)
			}
			if got := deflateBlob(body); !bytes.Equal(got, want) {
				t.Fatalf("deflateBlob of %d bytes = %.60s…, want %.60s…", len(body), got, want)
			}
		}
	}
}
