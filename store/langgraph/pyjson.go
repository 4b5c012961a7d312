package langgraph

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// pyFloat is a NaN or an infinity read from Python's JSON.
type pyFloat float64

// decodePyJSON reads JSON as Python's json.loads does by default: NaN,
// Infinity and -Infinity are numbers (pyFloat). It returns what
// encoding/json with UseNumber would (maps, lists, json.Number, strings,
// bools, nil), nested at most maxDepth deep.
func decodePyJSON(data []byte) (any, error) {
	p := pyParser{data: data}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.at != len(p.data) {
		return nil, fmt.Errorf("json: more after the value at byte %d", p.at)
	}
	return v, nil
}

type pyParser struct {
	data []byte
	at   int
}

var errPyJSON = errors.New("json: not a value")

func (p *pyParser) space() {
	for p.at < len(p.data) {
		switch p.data[p.at] {
		case ' ', '\t', '\n', '\r':
			p.at++
		default:
			return
		}
	}
}

func (p *pyParser) word(w string) bool {
	if len(p.data)-p.at >= len(w) && string(p.data[p.at:p.at+len(w)]) == w {
		p.at += len(w)
		return true
	}
	return false
}

func (p *pyParser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("json: nested more than %d deep", maxDepth)
	}
	p.space()
	if p.at >= len(p.data) {
		return nil, errPyJSON
	}
	switch c := p.data[p.at]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case p.word("true"):
		return true, nil
	case p.word("false"):
		return false, nil
	case p.word("null"):
		return nil, nil
	case p.word("NaN"):
		return pyFloat(math.NaN()), nil
	case p.word("Infinity"):
		return pyFloat(math.Inf(1)), nil
	case p.word("-Infinity"):
		return pyFloat(math.Inf(-1)), nil
	case c == '-' || c >= '0' && c <= '9':
		start := p.at
		for p.at < len(p.data) && isNumberByte(p.data[p.at]) {
			p.at++
		}
		n := json.Number(p.data[start:p.at])
		if !json.Valid([]byte(n)) {
			return nil, fmt.Errorf("json: bad number %q", n)
		}
		return n, nil
	}
	return nil, fmt.Errorf("json: unexpected %q at byte %d", p.data[p.at], p.at)
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// str reads a string, its escapes by encoding/json.
func (p *pyParser) str() (string, error) {
	start := p.at
	p.at++
	for p.at < len(p.data) {
		switch p.data[p.at] {
		case '\\':
			p.at += 2
			continue
		case '"':
			p.at++
			var s string
			if err := json.Unmarshal(p.data[start:p.at], &s); err != nil {
				return "", err
			}
			return s, nil
		}
		p.at++
	}
	return "", errors.New("json: unterminated string")
}

func (p *pyParser) object(depth int) (any, error) {
	p.at++ // {
	m := map[string]any{}
	p.space()
	if p.word("}") {
		return m, nil
	}
	for {
		p.space()
		if p.at >= len(p.data) || p.data[p.at] != '"' {
			return nil, errPyJSON
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if !p.word(":") {
			return nil, errPyJSON
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v
		p.space()
		if p.word("}") {
			return m, nil
		}
		if !p.word(",") {
			return nil, errPyJSON
		}
	}
}

func (p *pyParser) array(depth int) (any, error) {
	p.at++ // [
	l := []any{}
	p.space()
	if p.word("]") {
		return l, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		l = append(l, v)
		p.space()
		if p.word("]") {
			return l, nil
		}
		if !p.word(",") {
			return nil, errPyJSON
		}
	}
}
