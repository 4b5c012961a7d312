package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"rewind/store"
)

// A second role on the test server, dropped (with what it owns in dbs)
// when the test ends, and dbURL as that role.
func role(t *testing.T, dbs ...string) (name string, as func(dbURL string) string) {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name = "rewind_perm_" + hex.EncodeToString(b[:])
	admin := adminURL(t)
	adminExec(t, admin, `create role `+name+` login`)
	t.Cleanup(func() {
		for _, db := range dbs {
			adminExec(t, db, `drop owned by `+name)
		}
		adminExec(t, admin, `drop role `+name)
	})
	return name, func(dbURL string) string {
		u, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.User(name) // the test cluster trusts it
		return u.String()
	}
}

var grantRE = regexp.MustCompile(`GRANT [A-Z, ]+ ON [A-Z ]+ \S+ TO \w+`)

// wantDenied checks a permission error: one line, named as a permission
// problem with what was refused, ending with the GRANTs that fix it (which
// it returns), still the server's 42501 underneath, and not mistaken for a
// foreign schema.
func wantDenied(t *testing.T, err error, refused string) []string {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want permission denied for %s", refused)
	}
	msg := err.Error()
	grants := grantRE.FindAllString(msg, -1)
	var pgErr *pgconn.PgError
	switch {
	case !strings.Contains(msg, "permission denied for "+refused):
		t.Errorf("error %q does not say permission denied for %s", msg, refused)
	case len(grants) == 0 || !strings.HasSuffix(strings.TrimSuffix(msg, " (SELECT alone lets it read)"), grants[len(grants)-1]):
		t.Errorf("error %q does not end with the GRANT that fixes it", msg)
	case strings.ContainsAny(msg, "\n\t"):
		t.Errorf("error %q is not one line", msg)
	case errors.Is(err, ErrForeignSchema) || strings.Contains(msg, "did not create"):
		t.Errorf("error %q blames a foreign schema", msg)
	case !errors.As(err, &pgErr) || pgErr.Code != "42501":
		t.Errorf("error %q does not unwrap to the server's 42501", msg)
	}
	return grants
}

// A role without rights on rewind's tables is told so, with the GRANT,
// rather than that the tables are not rewind's; with SELECT it reads and
// is told the GRANT for writing; after the GRANT it does everything.
func TestPermissionsNamedWithTheGrant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := freshDB(t)
	s, err := Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 1, State: []byte(`{}`)}, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	name, as := role(t, dbURL)

	_, err = Open(ctx, as(dbURL))
	grants := wantDenied(t, err, "table rewind_schema_migrations")
	want := "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + name
	if len(grants) != 1 || grants[0] != want {
		t.Fatalf("GRANTs in %q = %q, want %q", err, grants, want)
	}

	adminExec(t, dbURL, `grant select on all tables in schema public to `+name)
	r, err := Open(ctx, as(dbURL))
	if err != nil {
		t.Fatalf("Open with SELECT: %v", err)
	}
	defer r.Close()
	if _, err := r.Get(ctx, "t", 1); err != nil {
		t.Errorf("Get with SELECT: %v", err)
	}
	for refused, err := range map[string]error{
		"table graph_checkpoints": r.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 2, ParentID: 1, State: []byte(`{}`)}, nil),
		"table graph_writes":      r.PutWrites(ctx, store.TaskWrites{ThreadID: "t", CheckpointID: 1, TaskID: "a", Writes: []byte(`{}`)}),
		"table graph_epoch":       func() error { _, err := r.Fence(ctx, "t"); return err }(),
		"table graph_":            r.DeleteThread(ctx, "t"),
		"table graph_drafts": func() error {
			_, _, err := r.CreateDraft(ctx, store.Draft{ThreadID: "t", OperationID: "op", Body: []byte(`{}`)})
			return err
		}(),
	} {
		if g := wantDenied(t, err, refused); len(g) != 1 || g[0] != want {
			t.Errorf("GRANTs in %q = %q, want %q", err, g, want)
		}
	}

	for _, g := range grants {
		adminExec(t, dbURL, g)
	}
	if err := r.PutCheckpoint(ctx, store.Checkpoint{ThreadID: "t", ID: 2, ParentID: 1, State: []byte(`{}`)}, nil); err != nil {
		t.Errorf("PutCheckpoint after the GRANT: %v", err)
	}
	if _, err := r.Fence(ctx, "t"); err != nil {
		t.Errorf("Fence after the GRANT: %v", err)
	}
	if err := r.DeleteThread(ctx, "t"); err != nil {
		t.Errorf("DeleteThread after the GRANT: %v", err)
	}
}

// A role that may not use the schema that holds rewind's tables cannot
// even see them: it is told so, not offered to create them.
func TestSchemaUsageNamedWithTheGrant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, dbURL := openFresh(t)
	name, as := role(t, dbURL)
	adminExec(t, dbURL, `revoke usage on schema public from public`)
	_, err := Open(ctx, as(dbURL))
	if err == nil || !strings.Contains(err.Error(), "may not use schema public") ||
		!strings.Contains(err.Error(), "GRANT USAGE ON SCHEMA public TO "+name) || errors.Is(err, ErrForeignSchema) {
		t.Fatalf("Open without USAGE = %v, want the schema named with its GRANT", err)
	}
	for _, g := range grantRE.FindAllString(err.Error(), -1) {
		adminExec(t, dbURL, g)
	}
	s, err := Open(ctx, as(dbURL))
	if err != nil {
		t.Fatalf("Open after the GRANTs: %v", err)
	}
	defer s.Close()
	if _, err := s.Fence(ctx, "t"); err != nil {
		t.Errorf("Fence after the GRANTs: %v", err)
	}
}

// A newer rewind's migration needs the tables' owner: the role that only
// uses them is told to run rewind once as the owner, then the GRANT, and
// that sequence works (the GRANT covers the table the migration added).
func TestUpgradeByAnotherRoleNamesTheOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := freshDB(t)
	applyUpTo(t, dbURL, len(migrations())-1)
	name, as := role(t, dbURL)
	adminExec(t, dbURL, `grant select, insert, update, delete on all tables in schema public to `+name)
	_, refused := Open(ctx, as(dbURL))
	owner := query(t, dbURL, `select current_user::text`)[0]
	last := migrations()[len(migrations())-1].name
	if refused == nil || !strings.Contains(refused.Error(), "cannot apply store migration "+last) ||
		!strings.Contains(refused.Error(), "run rewind once as "+owner) || strings.ContainsAny(refused.Error(), "\n\t") {
		t.Fatalf("Open of an old store by a role = %v, want it sent to the owner %s", refused, owner)
	}
	s, err := Open(ctx, dbURL) // the owner upgrades
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, g := range grantRE.FindAllString(refused.Error(), -1) {
		adminExec(t, dbURL, g)
	}
	r, err := Open(ctx, as(dbURL))
	if err != nil {
		t.Fatalf("Open after the owner's upgrade and the GRANT: %v", err)
	}
	defer r.Close()
	if _, err := r.Fence(ctx, "t"); err != nil {
		t.Errorf("Fence after the upgrade and the GRANT: %v", err)
	}
}

// A role in an empty database where it may not create tables, and one
// that may not connect at all.
func TestCreateAndConnectNamedWithTheGrant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := freshDB(t)
	name, as := role(t, dbURL)
	_, err := Open(ctx, as(dbURL))
	if err == nil || !strings.Contains(err.Error(), "cannot create the store's tables") ||
		!strings.HasSuffix(err.Error(), "GRANT USAGE, CREATE ON SCHEMA public TO "+name) {
		t.Fatalf("Open in a database the role may not create in = %v", err)
	}
	adminExec(t, dbURL, "GRANT USAGE, CREATE ON SCHEMA public TO "+name)
	s, err := Open(ctx, as(dbURL))
	if err != nil {
		t.Fatalf("Open after the GRANT: %v", err)
	}
	s.Close()

	db := strings.TrimPrefix(mustURL(t, dbURL).Path, "/")
	adminExec(t, dbURL, `revoke connect on database `+db+` from public`)
	_, err = Open(ctx, as(dbURL))
	if want := "GRANT CONNECT ON DATABASE " + db + " TO " + name; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("Open by a role that may not connect = %v, want it to end with %q", err, want)
	}
}

// withSearchPath is dbURL with its search_path set to path.
func withSearchPath(t *testing.T, dbURL, path string) string {
	t.Helper()
	u := mustURL(t, dbURL)
	q := u.Query()
	q.Set("search_path", path)
	u.RawQuery = q.Encode()
	return u.String()
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A URL whose search_path names a schema: the hint names that schema, or
// the search_path when it names none the user may create in (it named
// schema public, which the store was not going to use).
func TestSearchPathNamedInTheHint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := freshDB(t)
	name, as := role(t, dbURL)
	_, err := Open(ctx, withSearchPath(t, dbURL, "evil"))
	if err == nil || !strings.Contains(err.Error(), "the search_path (evil) names no schema") || strings.Contains(err.Error(), "public") {
		t.Errorf("Open with search_path=evil, no such schema = %v, want the search_path named, not public", err)
	}
	adminExec(t, dbURL, "CREATE SCHEMA evil; GRANT USAGE ON SCHEMA evil TO "+name)
	_, err = Open(ctx, as(withSearchPath(t, dbURL, "evil")))
	if err == nil || !strings.HasSuffix(err.Error(), "GRANT USAGE, CREATE ON SCHEMA evil TO "+name) || strings.Contains(err.Error(), "public") {
		t.Errorf("Open with search_path=evil, a schema the role may not create in = %v, want schema evil named", err)
	}
	s, err := Open(ctx, withSearchPath(t, dbURL, "evil"))
	if err != nil {
		t.Fatalf("Open as its owner: %v", err)
	}
	s.Close()
}
