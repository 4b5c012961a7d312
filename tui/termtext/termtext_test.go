package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	cases := []struct{ in, text, line, name string }{
		{"plain text", "plain text", "plain text", "plain text"},
		{"two\nlines", "two\nlines", "two⏎lines", "two␊lines"},
		{"\x1b]52;c;ZXZpbA==\x07", "␛]52;c;ZXZpbA==␇", "␛]52;c;ZXZpbA==␇", "␛]52;c;ZXZpbA==␇"},
		{"\x1b]8;;http://x\x1b\\a\x1b]8;;\x1b\\", "␛]8;;http://x␛\\a␛]8;;␛\\", "␛]8;;http://x␛\\a␛]8;;␛\\", "␛]8;;http://x␛\\a␛]8;;␛\\"},
		{"\x1b[2J\x1b[H", "␛[2J␛[H", "␛[2J␛[H", "␛[2J␛[H"},
		{"a\r\nb\rc", "a\nb␍c", "a⏎b␍c", "a␍␊b␍c"},
		{"\u009b31m", "⟨U+009B⟩31m", "⟨U+009B⟩31m", "⟨U+009B⟩31m"},
		{"x\u202ey\u2066z\u2069", "x⟨U+202E⟩y⟨U+2066⟩z⟨U+2069⟩", "x⟨U+202E⟩y⟨U+2066⟩z⟨U+2069⟩", "x⟨U+202E⟩y⟨U+2066⟩z⟨U+2069⟩"},
		{"tab\there", "tab    here", "tab    here", "tab␉here"},
		{"bad \xff byte", "bad ⟨0xFF⟩ byte", "bad ⟨0xFF⟩ byte", "bad ⟨0xFF⟩ byte"},
		{"del\x7f", "del␡", "del␡", "del␡"},
		{"zero\u200bwidth\ufeff", "zero⟨U+200B⟩width⟨U+FEFF⟩", "zero⟨U+200B⟩width⟨U+FEFF⟩", "zero⟨U+200B⟩width⟨U+FEFF⟩"},
		{"sep\u2028par\u2029", "sep⟨U+2028⟩par⟨U+2029⟩", "sep⟨U+2028⟩par⟨U+2029⟩", "sep⟨U+2028⟩par⟨U+2029⟩"},
		{"private\ue000", "private⟨U+E000⟩", "private⟨U+E000⟩", "private⟨U+E000⟩"},
		{"ünïcödé 日本 ✓", "ünïcödé 日本 ✓", "ünïcödé 日本 ✓", "ünïcödé 日本 ✓"},
	}
	for _, c := range cases {
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Name(c.in); got != c.name {
			t.Errorf("Name(%q) = %q, want %q", c.in, got, c.name)
		}
	}
}

func TestError(t *testing.T) {
	cases := map[string]string{
		"one line":   "one line",
		"trailing\n": "trailing",
		"failed to connect to `user=u database=d`:\n\t127.0.0.1:5432 (127.0.0.1): tls error: server refused TLS connection\n\t127.0.0.1:5432 (127.0.0.1): failed SASL auth: FATAL: password authentication failed for user \"u\" (SQLSTATE 28P01)": "failed to connect to `user=u database=d`; 127.0.0.1:5432 (127.0.0.1): tls error: server refused TLS connection; 127.0.0.1:5432 (127.0.0.1): failed SASL auth: FATAL: password authentication failed for user \"u\" (SQLSTATE 28P01)",
		"a\r\n  b":                            "a; b",
		"thread \x1b[2J\u009b\u202e\xff gone": "thread ␛[2J⟨U+009B⟩⟨U+202E⟩⟨0xFF⟩ gone",
	}
	for in, want := range cases {
		if got := Error(in); got != want {
			t.Errorf("Error(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJSON(t *testing.T) {
	hostile := "\x1b]52;c;cm0=\x07 \x9b31m \u009b \u202e \u2066 \u200b \x7f \r\n\t \U000e0001 \ue000 ok ✓"
	v := map[string]any{"id": hostile, hostile: []string{hostile}}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := JSON(raw)
	for _, r := range string(out) {
		if Unsafe(r) {
			t.Fatalf("JSON kept %U raw: %s", r, out)
		}
	}
	for _, want := range []string{`\u009b`, `\u202e`, `\u2066`, `\u200b`, `\u007f`, `\udb40\udc01`, `\ue000`, "ok ✓"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("JSON output has no %s: %s", want, out)
		}
	}
	var back map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("escaped JSON does not decode: %v\n%s", err, out)
	}
	if back["id"] != strings.ToValidUTF8(hostile, "\ufffd") || len(back) != 2 {
		t.Errorf("escaped JSON decodes to %q, want %q", back["id"], hostile)
	}
	if plain := []byte(`{"a":"b"}`); &JSON(plain)[0] != &plain[0] {
		t.Error("JSON copied plain ASCII")
	}
}

// Whatever comes in, nothing a terminal acts on comes out, and JSON stays
// JSON that decodes to the same value.
func FuzzSanitizers(f *testing.F) {
	for _, s := range []string{"\x1b[31m", "\x9b", "\u202e", "a\rb", "\xff\xfe", "ok", "a\tb\nc", "\U000e0001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, out := range map[string]string{"Text": Text(s), "Line": Line(s), "Name": Name(s), "Error": Error(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q): invalid UTF-8 out", name, s)
			}
			for _, r := range out {
				if Unsafe(r) && !(r == '\n' && name == "Text") {
					t.Fatalf("%s(%q) kept %U", name, s, r)
				}
			}
		}
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		out := JSON(raw)
		for _, r := range string(out) {
			if Unsafe(r) {
				t.Fatalf("JSON(%q) kept %U", raw, r)
			}
		}
		var back, want string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("JSON(%q) = %s does not decode: %v", raw, out, err)
		}
		_ = json.Unmarshal(raw, &want)
		if back != want {
			t.Fatalf("JSON(%q) decodes to %q, want %q", raw, back, want)
		}
	})
}

func TestSize(t *testing.T) {
	for n, want := range map[int]string{0: "0 bytes", 900: "900 bytes", 1024: "1 KB", MaxInput: "64 KB", MaxInput + 1: "64 KB", 1536: "1.5 KB", 1 << 20: "1 MB", 1258291: "1.2 MB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTooLong(t *testing.T) {
	if s := TooLong(MaxInput); s != "" {
		t.Errorf("TooLong(MaxInput) = %q, want it to fit", s)
	}
	if s := TooLong(MaxInput + 1); !strings.Contains(s, "65537 bytes") || !strings.Contains(s, "64 KB") {
		t.Errorf("TooLong(MaxInput+1) = %q", s)
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 12345: "12,345", 1072714: "1,072,714", -4200: "-4,200"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
