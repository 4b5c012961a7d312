package seal_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"rewind/engine/seal"
	"rewind/store"
)

func key(t *testing.T, text string) *seal.Key {
	t.Helper()
	k, err := seal.ParseKey([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

const (
	k1 = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	k2 = "k2:HyAhIiMkJSYnKCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4="
)

func TestSealOpensWithItsKeyOnly(t *testing.T) {
	body := []byte(`{"role":"user","content":"SENTINEL-42 my card"}`)
	hash := store.ContentHash(body)
	one := seal.NewKeys(key(t, k1))
	sealed := one.Seal(body, hash)
	if bytes.Contains(sealed, []byte("SENTINEL")) || !json.Valid(sealed) {
		t.Fatalf("sealed %s: holds the plaintext or is not JSON", sealed)
	}
	if h, ok := store.SealedHash(sealed); !ok || h != hash {
		t.Fatalf("store.SealedHash = %q, %v; want the body's hash %q", h, ok, hash)
	}
	if words := store.BodyWords(sealed); len(words) != 0 {
		t.Fatalf("a sealed body's words %q: its ciphertext would be indexed", words)
	}
	if again := one.Seal(body, hash); !bytes.Equal(again, sealed) {
		t.Fatal("sealing twice gave other bytes: a redelivered put would conflict")
	}
	got, err := one.Open(sealed)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("Open = %s, %v", got, err)
	}
	if seal.KeyID(sealed) != "k1" {
		t.Fatalf("KeyID = %q", seal.KeyID(sealed))
	}

	var se *seal.Error
	if _, err := (*seal.Keys)(nil).Open(sealed); !errors.As(err, &se) || se.Have != "" || se.KeyID != "k1" || !strings.Contains(err.Error(), "encrypted with key k1") {
		t.Fatalf("no key: %v", err)
	}
	if _, err := seal.NewKeys(key(t, k2)).Open(sealed); !errors.As(err, &se) || se.Have != "k2" || !strings.Contains(err.Error(), "k1") {
		t.Fatalf("other key: %v", err)
	}
	// A key under the same id that is not the one: refused, not garbage.
	if _, err := seal.NewKeys(key(t, "k1:"+k2[3:])).Open(sealed); !errors.As(err, &se) || !se.Wrong {
		t.Fatalf("wrong key of the same id: %v", err)
	}
	// The hash in the clear is bound to the ciphertext.
	other := bytes.Replace(sealed, []byte(hash), []byte(store.ContentHash([]byte("x"))), 1)
	if _, err := one.Open(other); !errors.Is(err, seal.ErrSealed) {
		t.Fatalf("a sealed body under another hash opened: %v", err)
	}
	// Plaintext passes through, with or without keys.
	if got, err := (*seal.Keys)(nil).Open(body); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("plaintext: %s, %v", got, err)
	}
}

func TestRekeyOpensOldSealsNew(t *testing.T) {
	doc := []byte(`{"v":{"summary":"SENTINEL"}}`)
	old := seal.NewKeys(key(t, k1)).Seal(doc, "")
	both := seal.NewKeys(key(t, k2), key(t, k1))
	plain, err := both.Open(old)
	if err != nil {
		t.Fatal(err)
	}
	if again := both.Seal(plain, ""); seal.KeyID(again) != "k2" {
		t.Fatalf("sealed with %q, want k2", seal.KeyID(again))
	}
	if both.Sealing() != "k2" || (*seal.Keys)(nil).Sealing() != "" {
		t.Fatal("Sealing names the wrong key")
	}
}

func TestParseKeyForms(t *testing.T) {
	raw := bytes.Repeat([]byte{7}, 32)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"base64":    "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=\n",
		"hex":       strings.Repeat("07", 32),
		"raw":       string(raw),
		"with id":   "prod-2026:BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=",
		"16 bytes":  strings.Repeat("07", 16),
		"short":     "c2hvcnQ=",
		"bad id":    "a b:BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=",
		"empty":     "",
		"not a key": "hello world",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		k, err := seal.LoadFile(path)
		wantErr := name == "short" || name == "bad id" || name == "empty" || name == "not a key"
		if wantErr {
			if err == nil || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: want a one-line error, got %v", name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if name == "with id" && k.ID != "prod-2026" || name != "with id" && !strings.HasPrefix(k.ID, "k") {
			t.Errorf("%s: id %q", name, k.ID)
		}
	}
	// One key, whichever way it is written, has one id.
	a, b := key(t, strings.Repeat("07", 32)), key(t, string(raw))
	if a.ID != b.ID {
		t.Fatalf("ids %q and %q for one key", a.ID, b.ID)
	}
	if _, err := seal.LoadFile(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing key file was accepted")
	}
}

func TestLargeDocumentsAreDeflatedBeforeSealing(t *testing.T) {
	doc := []byte(`{"messages":[` + strings.Repeat(`{"role":"user","content":"where is my order SO20260901?"},`, 200) + `{}]}`)
	keys := seal.NewKeys(key(t, k1))
	sealed := keys.Seal(doc, "")
	if len(sealed) >= len(doc)/2 {
		t.Fatalf("a repetitive %d-byte document sealed into %d bytes: not deflated", len(doc), len(sealed))
	}
	if again := keys.Seal(doc, ""); !bytes.Equal(again, sealed) {
		t.Fatal("deflate made sealing non-deterministic")
	}
	got, err := keys.Open(sealed)
	if err != nil || !bytes.Equal(got, doc) {
		t.Fatalf("Open: %v (%d bytes, want %d)", err, len(got), len(doc))
	}
}
