package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// defaultConnectTimeout bounds each connection attempt (dial, TLS, startup,
// authentication) when the URL sets no connect_timeout, so a down or
// silent server gives an error within seconds instead of hanging.
const defaultConnectTimeout = 5 * time.Second

// target names a database for messages (database, address, user), never the
// password.
type target struct {
	user, host, database string
	port                 uint16
	password             string // only for redacting driver messages
	timeout              time.Duration
}

func newTarget(cfg *pgxpool.Config) target {
	c := cfg.ConnConfig
	return target{
		user: c.User, host: c.Host, port: c.Port, database: c.Database,
		password: c.Password, timeout: c.ConnectTimeout,
	}
}

func (t target) addr() string {
	if strings.HasPrefix(t.host, "/") {
		return fmt.Sprintf("socket %s/.s.PGSQL.%d", t.host, t.port)
	}
	return net.JoinHostPort(t.host, fmt.Sprint(t.port))
}

func (t target) String() string {
	return fmt.Sprintf("database %q on %s as user %q", t.database, t.addr(), t.user)
}

// redacted is an error whose message has had the password masked. It still
// unwraps to the driver's error so errors.Is and errors.As work.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// mask hides the password in a driver's message.
func (t target) mask(msg string) string {
	if t.password == "" {
		return msg
	}
	return strings.ReplaceAll(msg, t.password, "xxxxx")
}

// wrap returns "postgres store: <msg>: <cause>" with the password masked in
// the cause's text.
func (t target) wrap(err error, format string, args ...any) error {
	return &redacted{msg: "postgres store: " + fmt.Sprintf(format, args...) + ": " + t.mask(err.Error()), err: err}
}

// connectError explains why the first connection failed and what to do.
func (t target) connectError(ctx context.Context, err error) error {
	var pgErr *pgconn.PgError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &pgErr):
		switch pgErr.Code {
		case "28P01":
			return t.wrap(err, "cannot connect to %s: the server refused the password; fix the password in the URL (or PGPASSWORD, ~/.pgpass)", t)
		case "28000":
			return t.wrap(err, "cannot connect to %s: the server refused this user; check the user name and the server's pg_hba.conf", t)
		case "42501": // the cause first, the fix last
			return &redacted{err: err, msg: fmt.Sprintf("postgres store: cannot connect to %s (%s): have the database's owner run GRANT CONNECT ON DATABASE %s TO %s",
				t, t.mask(pgErr.Message), ident(t.database), ident(t.user))}
		case "3D000":
			return t.wrap(err, "cannot connect to %s: the database does not exist; create it (createdb -h %s -p %d -U %s %s) or name an existing one in the URL",
				t, t.host, t.port, t.user, t.database)
		case "53300":
			return t.wrap(err, "cannot connect to %s: the server has no free connection slots; retry later or raise max_connections", t)
		case "57P03":
			return t.wrap(err, "cannot connect to %s: the server is starting up or shutting down; retry in a moment", t)
		}
		return t.wrap(err, "cannot connect to %s: the server refused the connection", t)
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, os.ErrNotExist):
		return t.wrap(err, "cannot connect to %s: nothing is listening there; start PostgreSQL or fix the host and port in the URL", t)
	case errors.As(err, &dnsErr):
		return t.wrap(err, "cannot connect to %s: cannot resolve host %q; fix the host in the URL", t, t.host)
	case ctx.Err() != nil:
		return t.wrap(err, "cannot connect to %s: gave up (%v)", t, context.Cause(ctx))
	case isTimeout(err):
		return t.wrap(err, "cannot connect to %s: no answer within %s; the server is down, overloaded or unreachable (set connect_timeout=SECONDS in the URL to wait longer)", t, t.timeout)
	}
	return t.wrap(err, "cannot connect to %s; check that the server runs and the URL is right", t)
}

func isTimeout(err error) bool {
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout())
}
