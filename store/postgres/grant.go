package postgres

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// privileges is who this store's connections are and where rewind's
// tables are, for messages about permissions: the GRANT that fixes one
// names them.
type privileges struct {
	user   string // current_user
	schema string // where rewind's tables are or would be made; "" when no schema is usable
	owner  string // the owner of rewind's tables; "" before they exist
	// usage is false when the user may not use the schema that holds them
	// (it then cannot see them at all).
	usage bool
	// path is the session's search_path: where tables are made, when a
	// schema of it exists and the user may use it.
	path string
}

// whoSQL reads privileges: $1 is the version table. A table in a schema
// the user may not use is invisible to to_regclass, so the schema is
// looked up by name in pg_class as well.
const whoSQL = `
with t as (
  select c.relowner, n.nspname from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where c.relname = $1 and c.relkind = 'r' order by (n.nspname = any(current_schemas(false))) desc, n.nspname limit 1
)
select current_user::text,
       coalesce(current_schema()::text, (select nspname::text from t), ''),
       coalesce((select pg_get_userbyid(relowner)::text from t), ''),
       coalesce(has_schema_privilege(coalesce(current_schema(), (select nspname from t), 'public'), 'USAGE'), false),
       current_setting('search_path')`

// readPrivileges reads the privileges on conn, for who to return.
func (s *Store) readPrivileges(ctx context.Context, conn *pgx.Conn) error {
	if err := s.readWho(ctx, conn); err != nil {
		return s.target.wrap(s.db(err), "cannot read which privileges user %q has", s.target.user)
	}
	return nil
}

// readWho is readPrivileges with the driver's error as it is: who calls
// it from db, which must not come back to who.
func (s *Store) readWho(ctx context.Context, conn *pgx.Conn) error {
	var p privileges
	if err := conn.QueryRow(ctx, whoSQL, versionTable).Scan(&p.user, &p.schema, &p.owner, &p.usage, &p.path); err != nil {
		return err
	}
	s.privMu.Lock()
	s.privileges, s.privRead = p, true
	s.privMu.Unlock()
	return nil
}

// who returns the privileges, reading them on a connection of the pool
// the first time: the one that was refused may be in an aborted
// transaction. When they cannot be read, the message names the URL's user
// and schema public, and the next refusal tries again.
func (s *Store) who(ctx context.Context) privileges {
	s.privMu.Lock()
	p, ok := s.privileges, s.privRead
	s.privMu.Unlock()
	if ok {
		return p
	}
	err := s.pool.AcquireFunc(ctx, func(pc *pgxpool.Conn) error { return s.readWho(ctx, pc.Conn()) })
	if err != nil {
		return privileges{user: s.target.user, usage: true}
	}
	s.privMu.Lock()
	defer s.privMu.Unlock()
	return s.privileges
}

// plain matches an identifier that needs no quotes.
var plain = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_]*$`) })

// ident quotes an identifier for a statement a person will paste, only
// when it needs quotes.
func ident(name string) string {
	if plain().MatchString(name) {
		return name
	}
	return pgx.Identifier{name}.Sanitize()
}

func (p privileges) schemaOr() string {
	if p.schema == "" {
		return "public"
	}
	return p.schema
}

// grant is the statement that gives the user what rewind needs on its
// tables.
func (p privileges) grant() string {
	return fmt.Sprintf("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %s TO %s", ident(p.schemaOr()), ident(p.user))
}

// byOwner says who should run a statement.
func (p privileges) byOwner() string {
	if p.owner == "" || p.owner == p.user {
		return "as the owner of rewind's tables"
	}
	return fmt.Sprintf("as %s (the owner of rewind's tables)", ident(p.owner))
}

// denied is a permission error (SQLSTATE 42501) told as one: what was
// refused, and the statement that fixes it. It unwraps to the server's
// error.
type denied struct {
	msg string
	err *pgconn.PgError
}

func (e *denied) Error() string { return e.msg }
func (e *denied) Unwrap() error { return e.err }

// deniedError explains the server's refusal pgErr (SQLSTATE 42501).
func (s *Store) deniedError(ctx context.Context, pgErr *pgconn.PgError) error {
	p := s.who(ctx)
	what := strings.TrimSpace(pgErr.Message) // "permission denied for table graph_checkpoints"
	var fix string
	switch {
	case !p.usage || strings.Contains(what, "for schema"):
		fix = fmt.Sprintf("run %s: GRANT USAGE ON SCHEMA %s TO %s; %s", p.byOwner(), ident(p.schemaOr()), ident(p.user), p.grant())
	case strings.Contains(what, "for table"), strings.Contains(what, "for relation"):
		fix = fmt.Sprintf("run %s: %s (SELECT alone lets it read)", p.byOwner(), p.grant())
	default:
		fix = fmt.Sprintf("give it the privilege, or use the user that owns rewind's tables (%s)", ident(p.owner))
	}
	return &denied{msg: fmt.Sprintf("%s: user %s may not do this: %s", what, ident(p.user), fix), err: pgErr}
}

// invisible is Open's error when the user may not use the schema that
// holds rewind's tables: it cannot tell them from nothing.
func (s *Store) invisible(ctx context.Context) error {
	p := s.who(ctx)
	return fmt.Errorf("postgres store: %s: user %s may not use schema %s, which holds rewind's tables: run %s: GRANT USAGE ON SCHEMA %s TO %s; %s",
		s.target, ident(p.user), ident(p.schemaOr()), p.byOwner(), ident(p.schemaOr()), ident(p.user), p.grant())
}
