package chainformat

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"testing"
	"time"
)

type ids []string

func (ids) MarshalJSON() ([]byte, error) { return []byte(`"none"`), nil }

// A channel's initial value is stored as json.Marshal writes it, also
// where initialJSON skips building the encoders: a checkpoint stored
// before reads back the same defaults.
func TestInitialValuesAreJSONMarshals(t *testing.T) {
	type item struct{ ID string }
	for _, v := range []any{
		nil, 0, false, "", []string{}, []item{}, []string(nil), map[string]int(nil),
		map[string]item{}, map[int]bool{}, []byte{}, []byte(nil), ids{}, map[netip.Addr]int{},
		map[struct{ A int }]int{}, []func(){}, map[string]func(){}, time.Time{}, []int{1}, map[string]int{"a": 1},
	} {
		want, wantErr := json.Marshal(v)
		got, err := initialJSON(v)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Errorf("%T %#v: %s, %v; json.Marshal: %s, %v", v, v, got, err, want, wantErr)
		}
	}
}
