package sqlite

import (
	"encoding/json"
	"slices"
	"testing"
)

// Hash lists written and read by hand are encoding/json's bytes and
// values: blob_refs rows older rewinds wrote read the same, and json_each
// finds the same hashes.
func TestHashListsAreEncodingJSONs(t *testing.T) {
	t.Parallel()
	for _, hs := range [][]string{nil, {}, {"ab12"}, {"ab12", "CD-34_x.y:z"}, {"a<b>"}, {"é"}, {`q"uote`}, {""}, {"bad\xff"}} {
		got, err := marshalHashes(hs)
		want, _ := json.Marshal(hs)
		if err != nil || string(got) != string(want) {
			t.Errorf("marshalHashes(%q) = %s (%v); json.Marshal writes %s", hs, got, err, want)
		}
	}
	for _, in := range []string{`[]`, `["ab12"]`, `["ab12","cd34"]`, `[ "ab12" ]`, `["ab12",]`, `["a\u0062"]`, `["ab12""cd"]`,
		`["ab12"`, `"ab12"]`, `null`, `[1]`, `["é"]`, `["ab12"] `, `[""]`, `[,]`} {
		var got, want []string
		gotErr := readHashes([]byte(in), &got)
		wantErr := json.Unmarshal([]byte(in), &want)
		if (gotErr == nil) != (wantErr == nil) || !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("readHashes(%s) = %q (%v); json.Unmarshal reads %q (%v)", in, got, gotErr, want, wantErr)
		}
	}
}
