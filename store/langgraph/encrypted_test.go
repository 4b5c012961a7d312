package langgraph_test

import (
	"context"
	"crypto/aes"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/eax"

	"rewind/store/langgraph"
	"rewind/store/langgraph/lgtest"
)

// sealLikeLangGraph encrypts as EncryptedSerializer.from_pycryptodome_aes
// does: AES-EAX, a fresh 16-byte nonce, stored nonce ‖ tag ‖ ciphertext.
func sealLikeLangGraph(t *testing.T, key string, plain []byte) []byte {
	t.Helper()
	block, err := aes.NewCipher([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	aead, err := eax.NewEAX(block)
	if err != nil {
		t.Fatal(err)
	}
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		t.Fatal(err)
	}
	sealed := aead.Seal(nil, nonce, plain, nil)
	body, tag := sealed[:len(plain)], sealed[len(plain):]
	return append(append(append([]byte{}, nonce...), tag...), body...)
}

// encryptFixture rewrites every checkpoint and write of a copy of the
// Python SqliteSaver fixture as an EncryptedSerializer would have stored
// them, and returns the copy's path.
func encryptFixture(t *testing.T, key string) string {
	t.Helper()
	path := lgtest.Copy(t, "sqlite-python.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []struct{ table, col string }{{"checkpoints", "checkpoint"}, {"writes", "value"}} {
		all := storedValues(t, db, q.table, q.col)
		n := 0
		for _, r := range all {
			if r.typ == "" || r.typ == "null" || r.typ == "empty" {
				continue
			}
			if _, err := db.Exec(`UPDATE `+q.table+` SET type = ?, `+q.col+` = ? WHERE rowid = ?`, r.typ+"+aes", sealLikeLangGraph(t, key, r.data), r.id); err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n == 0 {
			t.Fatalf("no %s encrypted: the fixture changed?", q.table)
		}
	}
	return path
}

// storedValue is a row's type and value column.
type storedValue struct {
	id   int64
	typ  string
	data []byte
}

// storedValues reads the type and col of every row of table.
func storedValues(t *testing.T, db *sql.DB, table, col string) []storedValue {
	t.Helper()
	rows, err := db.Query(`SELECT rowid, type, ` + col + ` FROM ` + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var all []storedValue
	for rows.Next() {
		var r storedValue
		var typ sql.NullString
		if err := rows.Scan(&r.id, &typ, &r.data); err != nil {
			t.Fatal(err)
		}
		r.typ = typ.String
		all = append(all, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return all
}

// everything reads every checkpoint and its writes of every chain, as JSON.
func everything(t *testing.T, src langgraph.Source) string {
	t.Helper()
	ctx := context.Background()
	ts, err := src.Threads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, th := range ts {
		for _, ns := range th.Namespaces {
			c := langgraph.Chain{Thread: th.ID, NS: ns.NS}
			h, err := src.History(ctx, c, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range h {
				cp, err := src.Checkpoint(ctx, c, l.ID)
				if err != nil {
					t.Fatal(err)
				}
				ws, err := src.Writes(ctx, c, l.ID)
				if err != nil {
					t.Fatal(err)
				}
				j, err := json.Marshal(struct {
					Listing    langgraph.Listing
					Checkpoint langgraph.Checkpoint
					Writes     any
				}{l, cp, ws})
				if err != nil {
					t.Fatal(err)
				}
				b.Write(j)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// Issue 34: a database written through LangGraph's EncryptedSerializer
// reads, with LANGGRAPH_AES_KEY, exactly as the same database unencrypted;
// without the key (or with another) every value is named as encrypted and
// what needs the key, and nothing fails.
func TestEncryptedSerializerReadsWithItsKey(t *testing.T) {
	const key = "0123456789abcdef0123456789abcdef"
	plain := everything(t, open(t, "sqlite:"+lgtest.Copy(t, "sqlite-python.db")))
	path := encryptFixture(t, key)

	t.Setenv(langgraph.EnvAESKey, key)
	got := everything(t, open(t, "sqlite:"+path))
	// The writes say how they were stored; the values are the same.
	if strings.ReplaceAll(got, `+aes"`, `"`) != plain {
		t.Fatalf("the encrypted database read with its key differs from the plain one:\n%.2000s\n---- plain:\n%.2000s", got, plain)
	}

	for _, c := range []struct{ key, says string }{
		{"", "set LANGGRAPH_AES_KEY to the key the saver used"},
		{"fedcba9876543210", "LANGGRAPH_AES_KEY does not open this value"},
		{"short", "LANGGRAPH_AES_KEY is 5 bytes long"},
	} {
		t.Setenv(langgraph.EnvAESKey, c.key)
		src := open(t, "sqlite:"+path)
		h := history(t, src, tFail)
		if len(h) == 0 || !strings.Contains(h[0].Damaged, c.says) {
			t.Fatalf("key %q: the newest checkpoint's damage reads %q, want it to say %q", c.key, h[0].Damaged, c.says)
		}
		all := everything(t, src)
		if !strings.Contains(all, c.says) {
			t.Fatalf("key %q: no value says %q", c.key, c.says)
		}
	}
}
