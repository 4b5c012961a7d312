package chainformat

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// blobRefs finds what the regular expression it replaced found: every
// "$b" key with a lower-case hash, spaces allowed (a jsonb row's), and
// nothing else. A ref it missed would let Prune free a blob a row needs.
func TestBlobRefsFindsEveryReference(t *testing.T) {
	ref := regexp.MustCompile(`"\$b"\s*:\s*"([0-9a-f]{20})"`)
	h1, h2 := "0123456789abcdef0123", "fedcba98765432100000"
	for _, doc := range []string{
		``,
		`{"a":1}`,
		`{"$b":"` + h1 + `"}`,
		`{"x":{"$b":"` + h1 + `"},"y":[{"$b" : "` + h2 + `"}]}`,
		`{"x":{"$b":` + "\n\t" + `"` + h1 + `"}}`,
		`{"$lit":{"$b":"` + h2 + `"}}`,
		`{"$b":"0123456789ABCDEF0123"}`,      // not a hash: upper case
		`{"$b":"0123456789abcdef012"}`,       // too short
		`{"$b":"0123456789abcdef01234"}`,     // too long
		`{"$b":123,"c":{"$b":"` + h1 + `"}}`, // a number first
		`"$b"`,
		`{"t":"say \"$b\":\"` + h1 + `\" here"}`, // escaped in a string: not a key
		`{"$b":"` + h1 + `"`,                     // cut short
	} {
		var want []string
		for _, m := range ref.FindAllStringSubmatch(doc, -1) {
			want = append(want, m[1])
		}
		if got := blobRefs([]byte(doc)); !slices.Equal(got, want) {
			t.Errorf("blobRefs(%s) = %q; want %q", doc, got, want)
		}
	}
}

// BenchmarkBlobRefs scans a 20 KB document with two references, by hand
// and with the regular expression blobRefs replaced.
func BenchmarkBlobRefs(b *testing.B) {
	doc := []byte(`{"v":{"summary":{"$b":"0123456789abcdef0123"},"notes":"` + strings.Repeat("plain text, no reference ", 800) + `","att":{"$b" : "fedcba98765432100000"}}}`)
	ref := regexp.MustCompile(`"\$b"\s*:\s*"([0-9a-f]{20})"`)
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			if len(blobRefs(doc)) != 2 {
				b.Fatal("want 2")
			}
		}
	})
	b.Run("regexp", func(b *testing.B) {
		for b.Loop() {
			if len(ref.FindAllSubmatch(doc, -1)) != 2 {
				b.Fatal("want 2")
			}
		}
	})
}
