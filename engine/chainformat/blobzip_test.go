package chainformat

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
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
