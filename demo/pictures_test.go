package demo

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
)

// README shows every picture demo/pictures.sh makes, each file is there,
// and no picture lies in demo/pictures that nothing makes.
func TestREADMEPicturesExist(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("pictures.sh")
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, m := range regexp.MustCompile(`\]\((demo/pictures/[^)\s]+)\)`).FindAllStringSubmatch(string(readme), -1) {
		shown[filepath.Base(m[1])] = true
		if _, err := os.Stat(filepath.Join("..", m[1])); err != nil {
			t.Errorf("README shows %s, which is not there: run demo/pictures.sh (%v)", m[1], err)
		}
	}
	made := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^shot ([a-z0-9-]+)$`).FindAllStringSubmatch(string(script), -1) {
		made[m[1]+".svg"] = true
		if !shown[m[1]+".svg"] {
			t.Errorf("demo/pictures.sh makes %s.svg, which README does not show", m[1])
		}
	}
	if len(made) < 4 {
		t.Errorf("demo/pictures.sh makes %d pictures, want the summary, the fork tree, the kill/resume strip and a diff", len(made))
	}
	files, _ := filepath.Glob("pictures/*.svg")
	sort.Strings(files)
	for _, f := range files {
		if !made[filepath.Base(f)] {
			t.Errorf("%s: demo/pictures.sh does not make it (a stale picture?)", f)
		}
	}
	for name := range shown {
		if !made[name] {
			t.Errorf("README shows %s, which demo/pictures.sh does not make", name)
		}
	}
}
