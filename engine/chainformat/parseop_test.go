package chainformat

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestReadOpAgrees reads transcript ops by hand and with encoding/json.
func TestReadOpAgrees(t *testing.T) {
	for _, raw := range []string{
		`{"$m+":"U-m6laZXv_qyLA"}`, `{"$m":"U-m6laZXv_qyLAlL8jX6TSAuM22w"}`, `{"$m":""}`, ` { "$m+" : "U-m6laZXv_qyLA" } `,
		`{"$m+":"short"}`, `{"$m+":"U-m6laZXv_qy\u004cA"}`, `{"$M+":"U-m6laZXv_qyLA"}`, `{"$m":"U-m6laZXv_qyLA","$m+":"U-m6laZXv_qyLA"}`,
		`{"$m+":"U-m6laZXv_qyLA","$m+":"lL8jX6TSAuM22w"}`, `{"$m+":["ab"]}`, `{"$m":[]}`, `{"$m+":null}`, `{}`, `[]`, `{"$m+":"U-m6laZXv_qyLA"`, `{"x":1}`,
	} {
		want, err := parseOpSlow(json.RawMessage(raw))
		got, ok := readOp([]byte(raw))
		if ok && (err != nil || !reflect.DeepEqual(got, want)) {
			t.Errorf("%s: read %+v, encoding/json %+v (%v)", raw, got, want, err)
		}
		if wantOK := raw == `{"$m+":"U-m6laZXv_qyLA"}` || raw == `{"$m":"U-m6laZXv_qyLAlL8jX6TSAuM22w"}` || raw == `{"$m":""}` || raw[0] == ' '; ok != wantOK {
			t.Errorf("%s: read by hand %v, want %v", raw, ok, wantOK)
		}
	}
}
