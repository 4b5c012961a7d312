package model

import (
	"regexp"
	"strings"
	"sync"
)

// fence is a Markdown code block: ```json … ``` or ``` … ```.
var fence = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?s)```[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)```") })

// Candidates lists the JSON texts an answer may hold, most likely first:
// the whole answer, each fenced code block, then each balanced {…} in
// order of appearance (braces inside strings do not count). A model asked
// for JSON in the prompt alone wraps it in prose, fences it, or adds a
// closing remark with braces of its own; trying each candidate in turn
// finds the JSON in all of these. Callers decode each until one holds what
// they need: a candidate is only text that may be JSON.
func Candidates(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	add(text)
	for _, m := range fence().FindAllStringSubmatch(text, -1) {
		add(m[1])
	}
	for i := 0; i < len(text); i++ {
		if text[i] != '{' {
			continue
		}
		if end := balanced(text, i); end > 0 {
			add(text[i:end])
			i = end - 1
		}
	}
	return out
}

// balanced is the end of the object opening at s[i] (one past its closing
// brace), or -1 when it never closes. Strings are skipped with their
// escapes, so a "}" in a value does not end the object.
func balanced(s string, i int) int {
	depth, inString := 0, false
	for j := i; j < len(s); j++ {
		c := s[j]
		switch {
		case inString && c == '\\':
			j++
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
}
