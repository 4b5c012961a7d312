package themes

import (
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2/styles"
)

// TestEmbeddedChromaStylesMatch: the copied bases (chroma/*.xml) are
// chroma's own styles of the version go.mod names, entry for entry, and
// every theme's base is one of them.
func TestEmbeddedChromaStylesMatch(t *testing.T) {
	files, err := fs.Glob(chromaBases, "chroma/*.xml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no embedded styles: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "chroma/"), ".xml")
		ours, err := baseStyle(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		theirs, ok := styles.Registry[name]
		if !ok {
			t.Fatalf("chroma has no style %q any more", name)
		}
		for _, tt := range theirs.Types() {
			if a, b := ours.Get(tt), theirs.Get(tt); !reflect.DeepEqual(a, b) {
				t.Errorf("%s %s: ours %v, chroma's %v (copy chroma's file again)", name, tt, a, b)
			}
		}
	}
	if s := fallbackStyle(); s != nil && s.Name != styles.Fallback.Name {
		t.Errorf("the fallback is %s, chroma's is %s", s.Name, styles.Fallback.Name)
	}
	// What each theme highlights with is what it was built with when its
	// bases came from chroma's registry.
	for _, name := range Names() {
		th := Or(name)
		want := map[string]string{Dark: "github-dark", Light: "github", HighContrast: "swapoff", NoColor: "bw"}[name]
		if got := th.Chroma().Name; got != want {
			t.Errorf("theme %s highlights with %s, want %s", name, got, want)
		}
	}
}
