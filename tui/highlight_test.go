package tui

import (
	"reflect"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// TestEmbeddedLexersMatch: the copied lexers (lexers/*.xml) tokenise as
// chroma's own of the version go.mod names.
func TestEmbeddedLexersMatch(t *testing.T) {
	samples := map[string]string{
		"json": "{\n  \"a\": [1, -2.5e3, true, null],\n  \"b\": {\"c\": \"d\\\"e\"}, // note\n  \"f\": \"\"\n}\n",
		"diff": "diff --git a/x b/x\nindex 1..2\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n context\n-old\n+new\n!x\n=== y\n< l\n> r\n1,2c3\n---\nplain",
	}
	for name := range lexerByName {
		text, ok := samples[name]
		if !ok {
			t.Fatalf("no sample for lexer %s", name)
		}
		ours := lexer(name)
		if ours == nil {
			t.Fatalf("lexer %s does not parse", name)
		}
		theirs := lexers.Get(name)
		if theirs == nil {
			t.Fatalf("chroma has no lexer %q any more", name)
		}
		a, b := tokens(t, ours, text), tokens(t, chroma.Coalesce(theirs), text)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: ours %v\nchroma's %v (copy chroma's file again)", name, a, b)
		}
		if len(a) < 5 {
			t.Errorf("%s: only %d tokens: %v", name, len(a), a)
		}
	}
}

func tokens(t *testing.T, l chroma.Lexer, text string) []chroma.Token {
	it, err := l.Tokenise(nil, text)
	if err != nil {
		t.Fatal(err)
	}
	return it.Tokens()
}
