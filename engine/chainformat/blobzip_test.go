package chainformat

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A summary-sized blob is stored compressed and reads back as it was; a
// body that does not shrink, or is larger than zipMax, is stored as it is;
// a compressed body that inflates past zipMax is refused, not read.
func TestBlobsZipWhenItPays(t *testing.T) {
	text, _ := json.Marshal(strings.Repeat("#12 executor[t-1-order]: stage at local depot, since 2026-09-03 09:55.\n", 30))
	stored := zipBlob(text)
	if !bytes.HasPrefix(stored, markZip) || len(stored) > len(text)/2 {
		t.Fatalf("a %d-byte summary is stored as %d bytes: %.80s", len(text), len(stored), stored)
	}
	if back, err := unzipBlob(stored); err != nil || !bytes.Equal(back, text) {
		t.Fatalf("it reads back as %.80s (%v)", back, err)
	}
	noise := make([]byte, 2000)
	for i := range noise {
		noise[i] = byte(i*7919>>3) ^ byte(i*31)
	}
	random, _ := json.Marshal(base64.StdEncoding.EncodeToString(noise))
	if got := zipBlob(random); !bytes.Equal(got, random) {
		t.Errorf("a body that does not shrink by a quarter is stored zipped")
	}
	huge, _ := json.Marshal(strings.Repeat("a", zipMax+1))
	if got := zipBlob(huge); !bytes.Equal(got, huge) {
		t.Errorf("a body over zipMax is stored zipped")
	}
	if back, err := unzipBlob(huge); err != nil || !bytes.Equal(back, huge) {
		t.Errorf("a plain body reads as %d bytes (%v)", len(back), err)
	}
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.BestCompression)
	_, _ = w.Write(bytes.Repeat([]byte("a"), 4*zipMax))
	_ = w.Close()
	bomb, _ := json.Marshal(map[string][]byte{"$z": z.Bytes()})
	if _, err := unzipBlob(bomb); err == nil {
		t.Errorf("a body that inflates past zipMax is read")
	}
}

// BenchmarkUnzipBlob inflates a summary-sized blob, as a newest load does
// for each blob its head refers to.
func BenchmarkUnzipBlob(b *testing.B) {
	var lines strings.Builder
	for i := range 200 {
		fmt.Fprintf(&lines, "#%d executor[t-%d-order]: stage at depot %d, since 2026-09-%02d 09:55.\n", i, i%7, i*37%101, i%28+1)
	}
	text, _ := json.Marshal(lines.String())
	stored := zipBlob(text)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := unzipBlob(stored); err != nil {
			b.Fatal(err)
		}
	}
}

// Blobs inflated straight into the value (unblobFast) read as restore
// reads them: compressed and plain, one named twice in a value, one a
// later value names again (served from the first value's bytes), one
// that inflates past a guess of its size, and a corrupt one refused.
func TestUnblobInflatesIntoTheValue(t *testing.T) {
	var long strings.Builder
	for i := range 3000 { // inflates past inflateGuess times its DEFLATE size
		long.WriteString("aaaaaaaa")
		if i%500 == 0 {
			fmt.Fprintf(&long, "#%d ", i)
		}
	}
	texts := map[string]string{
		"a": strings.Repeat("#12 executor[t-1-order]: stage at local depot, since 2026-09-03 09:55.\n", 30),
		"b": "short, stored as it is",
		"c": long.String(),
		"d": strings.Repeat("#7 tool[refund_policy]: 5 working days; 30 days\n", 40),
	}
	set := &blobSet{stored: map[string][]byte{}}
	hashes := map[string]string{}
	for k, text := range texts {
		body, _ := json.Marshal(text)
		hashes[k] = fmt.Sprintf("%020x", len(hashes)+1)
		set.stored[hashes[k]] = zipBlob(body)
	}
	if bytes.HasPrefix(set.stored[hashes["b"]], markZip) || !bytes.HasPrefix(set.stored[hashes["c"]], markZip) {
		t.Fatalf("the blobs are not stored as the test needs")
	}
	ref := func(k string) string { return `{"$b":"` + hashes[k] + `"}` }
	for _, raw := range []string{
		`["first",` + ref("a") + `,` + ref("b") + `,` + ref("a") + `,"mid",` + ref("c") + `]`,
		`{"x":` + ref("c") + `,"y":[` + ref("a") + `,` + ref("d") + `],"z":1}`,
		ref("d"),
	} {
		want, err := unblobSlow(json.RawMessage(raw), &blobSet{stored: set.stored})
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := unblobFast(json.RawMessage(raw), set)
		if err != nil || !ok || !bytes.Equal(got, want) {
			t.Errorf("%.60s reads as\n%.200s (ok %v, %v), want\n%.200s", raw, got, ok, err, want)
		}
	}
	for k, text := range texts {
		body, _ := json.Marshal(text)
		if got := set.bodies[hashes[k]]; !bytes.Equal(got, body) {
			t.Errorf("blob %s is kept as %.60s", k, got)
		}
	}
	bad := &blobSet{stored: map[string][]byte{hashes["a"]: []byte(`{"$z":"AAAA"}`)}}
	if _, _, err := unblobFast(json.RawMessage(`[`+ref("a")+`]`), bad); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a blob that does not inflate reads: %v", err)
	}
}
