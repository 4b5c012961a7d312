package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// keyFiles writes k1's and k2's key files and a file that holds no key.
func keyFiles(t *testing.T) (k1, k2, bad string) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"k1":  "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n",
		"k2":  "k2:HyAhIiMkJSYnKCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4=\n",
		"bad": "not a key\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "k1"), filepath.Join(dir, "k2"), filepath.Join(dir, "bad")
}

// TestEncryptedThreadWithAndWithoutTheKey: what a user sees of a thread
// written with --key-file: all of it with the key; without it the
// listings, runs and events, and show saying what is encrypted; a wrong
// or broken key one line, nothing written.
func TestEncryptedThreadWithAndWithoutTheKey(t *testing.T) {
	t.Parallel()
	path, spec := dbSpec(t)
	k1, k2, bad := keyFiles(t)
	env := []string{"REWIND_STORE=" + spec}
	const secret = "Walrus4417"
	if r := rewind(t, env, "run", "--thread", "s", "--input", "Where is order SO20260901? code "+secret, "--key-file", k1); r.code != 0 {
		t.Fatal(r.stderr)
	}
	// $REWIND_KEY_FILE as --key-file.
	if r := rewind(t, append(env, "REWIND_KEY_FILE="+k1), "run", "--thread", "s", "--input", "And the invoice? "+secret); r.code != 0 {
		t.Fatal(r.stderr)
	}
	for _, p := range []string{path, path + "-wal"} {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), secret) {
			t.Fatalf("%s holds the message's text", p)
		}
	}
	if r := rewind(t, env, "show", "s", "--key-file", k1); r.code != 0 || !strings.Contains(r.stdout, secret) {
		t.Fatalf("show with the key: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := rewind(t, env, "search", "s", strings.ToLower(secret), "--key-file", k1); r.code != 0 || strings.Count(r.stdout, secret) != 2 {
		t.Fatalf("search with the key: %d %s %s", r.code, r.stdout, r.stderr)
	}

	show := rewind(t, env, "show", "s")
	if show.code != 0 || !strings.Contains(show.stdout, "messages, summary are encrypted (key id k1); give --key-file to read them") || strings.Contains(show.stdout, secret) {
		t.Fatalf("show without the key: %d\n%s%s", show.code, show.stdout, show.stderr)
	}
	log := rewind(t, env, "log", "s")
	for _, args := range [][]string{{"log", "s"}, {"runs", "s"}, {"threads"}, {"events", "s"}} {
		if r := rewind(t, env, args...); r.code != 0 || r.stderr != "" {
			t.Errorf("%s without the key: %d %s", args[0], r.code, r.stderr)
		}
	}
	if r := rewind(t, env, "events", "s"); !strings.Contains(r.stdout, "input.received") || !strings.Contains(r.stdout, "model calls are left out") {
		t.Errorf("events without the key:\n%s", r.stdout)
	}

	oneLine := func(what string, r result, code int, want string) {
		t.Helper()
		if r.code != code || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, %q; want exit %d and one line naming %q", what, r.code, r.stderr, code, want)
		}
	}
	oneLine("a run with the wrong key", rewind(t, env, "run", "--thread", "s", "--input", "more", "--key-file", k2), 1, "key k1")
	oneLine("a run without the key", rewind(t, env, "run", "--thread", "s", "--input", "more"), 1, "--key-file")
	oneLine("show with the wrong key", rewind(t, env, "show", "s", "--key-file", k2), 1, "key k1")
	oneLine("a key file that holds no key", rewind(t, env, "show", "s", "--key-file", bad), 2, "base64")
	oneLine("a key file that is not there", rewind(t, env, "log", "s", "--key-file", bad+"-missing"), 2, "key file")
	oneLine("an empty --key-file", rewind(t, env, "log", "s", "--key-file", ""), 2, "--key-file")
	if again := rewind(t, env, "log", "s"); again.stdout != log.stdout {
		t.Fatalf("a refused command changed the thread:\n%s\nthen\n%s", log.stdout, again.stdout)
	}

	// Rotation to k2: the old key is needed (refused without it, one
	// line, nothing changed), then k2 reads it all and k1 nothing.
	oneLine("a rekey without the old key", rewind(t, env, "rekey", "s", "--key-file", k2), 1, "key k1")
	oneLine("a rekey without the new key", rewind(t, env, "rekey", "s", "--old-key-file", k1), 2, "--key-file NEW")
	if r := rewind(t, env, "show", "s", "--key-file", k1); r.code != 0 {
		t.Fatalf("a refused rekey changed the thread: %s", r.stderr)
	}
	r := rewind(t, env, "rekey", "s", "--key-file", k2, "--old-key-file", k1)
	if r.code != 0 || !strings.Contains(r.stdout, "now sealed with key k2") || !strings.Contains(r.stdout, "from key k1") {
		t.Fatalf("rekey: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := rewind(t, env, "show", "s", "--key-file", k2); r.code != 0 || !strings.Contains(r.stdout, secret) {
		t.Fatalf("show with the new key: %d %s", r.code, r.stderr)
	}
	oneLine("show with the old key after the rekey", rewind(t, env, "show", "s", "--key-file", k1), 1, "key k2")
	if r := rewind(t, env, "show", "s"); !strings.Contains(r.stdout, "(key id k2)") {
		t.Fatalf("show without a key after the rekey: %s", r.stdout)
	}
}
