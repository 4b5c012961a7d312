package sqlite

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite fresh_schema.go from what the migrations build")

// A new file gets the newest schema in one script (freshSchema); a file
// of every older schema gets it through the migrations. Both must be the
// same store, or a fresh file would differ (and upgrade differently)
// from one its user made a release ago. Adding a migration without
// regenerating freshSchema fails here.
func TestFreshSchemaIsTheMigratedOne(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	migrated := filepath.Join(dir, "migrated.db")
	migrateFromOne(ctx, t, migrated)
	if *update {
		writeFreshSchema(ctx, t, migrated)
		return
	}
	fresh := filepath.Join(dir, "fresh.db")
	s, err := Open(ctx, fresh)
	if err != nil {
		t.Fatalf("open a new file: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want, got := dumpStore(ctx, t, migrated), dumpStore(ctx, t, fresh)
	if diff := lineDiff(want, got); diff != "" {
		t.Fatalf("a new file (freshSchema in fresh_schema.go, freshRows in migrate.go) is not what the migrations build "+
			"(- migrated, + new):\n%s\nafter adding or changing a migration, regenerate the schema: "+
			"go test ./store/sqlite -run TestFreshSchemaIsTheMigratedOne -update; "+
			"rows a migration inserts go in freshRows by hand", diff)
	}
}

// migrateFromOne makes path a store of schema 1 by hand, then has Open
// take it through every later migration, as it upgrades a user's file.
func migrateFromOne(ctx context.Context, t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS rewind_store_schema (version INTEGER NOT NULL);`+
		migrations[0]+`; INSERT INTO rewind_store_schema (version) VALUES (1)`)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("upgrade a schema-1 file: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// dumpStore lists what makes two stores the same: every schema object
// (but its root page), the pragmas a file keeps, and every table's rows.
func dumpStore(ctx context.Context, t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := queryLines(ctx, t, db, `SELECT 'schema ' || type || ' ' || name || ' on ' || tbl_name || ': ' || coalesce(sql, '')
		FROM sqlite_schema ORDER BY type, name`)
	for _, p := range []string{"user_version", "application_id", "journal_mode", "auto_vacuum", "page_size", "encoding"} {
		out = append(out, queryLines(ctx, t, db, `SELECT 'pragma `+p+` ' || `+p+` FROM pragma_`+p)...)
	}
	// A virtual table's rows are its shadow tables', listed apart.
	for _, table := range queryLines(ctx, t, db, `SELECT name FROM sqlite_schema
		WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name`) {
		out = append(out, tableRows(ctx, t, db, table)...)
	}
	return out
}

func tableRows(ctx context.Context, t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, `SELECT * FROM "`+table+`" ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("row %s: %q", table, vals))
	}
	if err := closeRows(rows); err != nil {
		t.Fatal(err)
	}
	return out
}

func queryLines(ctx context.Context, t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := closeRows(rows); err != nil {
		t.Fatal(err)
	}
	return out
}

func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// lineDiff names the lines only one side has, in order ("" when equal).
func lineDiff(want, got []string) string {
	count := map[string]int{}
	for _, l := range got {
		count[l]++
	}
	var b strings.Builder
	for _, l := range want {
		if count[l] > 0 {
			count[l]--
			continue
		}
		fmt.Fprintf(&b, "- %s\n", l)
	}
	for _, l := range got {
		if count[l] > 0 {
			count[l]--
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}

// writeFreshSchema writes fresh_schema.go from a migrated file: its
// schema objects but SQLite's own and the shadow tables a virtual table
// makes, tables before the virtual tables, indexes and triggers on them.
func writeFreshSchema(ctx context.Context, t *testing.T, migrated string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+migrated+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := queryLines(ctx, t, db, `SELECT sql FROM sqlite_schema s
		WHERE sql IS NOT NULL AND name <> 'rewind_store_schema'
			AND NOT EXISTS (SELECT 1 FROM pragma_table_list l WHERE l.name = s.name AND l.type = 'shadow')
		ORDER BY CASE WHEN type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' THEN 0
			WHEN type = 'table' THEN 1 WHEN type = 'index' THEN 2 ELSE 3 END, name`)
	script := strings.Join(stmts, ";\n")
	if strings.Contains(script, "`") {
		t.Fatal("the migrated schema holds a backquote, which a Go raw string cannot: write fresh_schema.go by hand")
	}
	src := fmt.Sprintf(`// Code generated by TestFreshSchemaIsTheMigratedOne -update; DO NOT EDIT.

package sqlite

// freshSchema is what the migrations build, as a new file gets it
// (createNewest): the statements of a migrated file's sqlite_schema.
const freshSchema = %s
`, "`"+script+"`")
	formatted, err := format.Source([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("fresh_schema.go", formatted, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote fresh_schema.go (%d statements); run the test again without -update", len(stmts))
}
