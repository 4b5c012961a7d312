package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

const secret = "s3cr3t-Pa55"

// checkOpenFails opens dbURL and checks that the failure comes in time,
// names the host and the database, hides the password and says want.
func checkOpenFails(t *testing.T, dbURL, host, database string, want ...string) error {
	t.Helper()
	start := time.Now()
	s, err := Open(context.Background(), dbURL)
	took := time.Since(start)
	if err == nil {
		s.Close()
		t.Fatalf("Open(%s) succeeded", dbURL)
	}
	t.Logf("after %v: %v", took.Round(time.Millisecond), err)
	if took > 10*time.Second {
		t.Errorf("took %v, want < 10s", took)
	}
	msg := err.Error()
	if strings.Contains(msg, secret) {
		t.Errorf("message leaks the password: %q", msg)
	}
	for _, w := range append([]string{"postgres store:", host, database}, want...) {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q lacks %q", msg, w)
		}
	}
	return err
}

// Not parallel: its subtests bound how soon Open fails (before a dial).
func TestConnectErrors(t *testing.T) {
	t.Run("bad URL", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		_, err := Open(context.Background(), "postgres://bob:"+secret+"@db.example:notaport/app")
		// A bound, not a timing: a bad URL must fail before any dial (a
		// dial's timeout is far longer), even on a loaded CI machine.
		if err == nil || time.Since(start) > 10*time.Second {
			t.Fatalf("Open = %v after %v, want an error before any dial", err, time.Since(start))
		}
		t.Log(err)
		if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "bad URL") || !strings.Contains(err.Error(), "db.example") {
			t.Errorf("message %q: want 'bad URL' and the host, not the password", err)
		}
	})

	t.Run("closed port", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		checkOpenFails(t, "postgres://bob:"+secret+"@"+addr+"/appdb?sslmode=disable", addr, "appdb", "nothing is listening", "start PostgreSQL")
	})

	t.Run("silent server", func(t *testing.T) {
		t.Parallel()
		// Accepts connections and never answers: the default 5 s timeout
		// must end the wait.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { c.Close() })
			}
		}()
		addr := l.Addr().String()
		checkOpenFails(t, "postgres://bob:"+secret+"@"+addr+"/appdb", addr, "appdb", "no answer within 5s")
	})

	t.Run("wrong password, protocol-level", func(t *testing.T) {
		t.Parallel()
		addr, got := fakeAuthServer(t)
		checkOpenFails(t, "postgres://bob:"+secret+"@"+addr+"/appdb?sslmode=disable", addr, "appdb", "refused the password", "fix the password")
		if p := <-got; p != secret {
			t.Errorf("server got password %q, want %q", p, secret)
		}
	})

	t.Run("wrong password, real server", func(t *testing.T) {
		t.Parallel()
		admin := adminURL(t)
		adminExec(t, admin, `do $$ begin
  create role rewind_password_test login password 'right-one';
exception when duplicate_object then null; end $$`)
		u, _ := url.Parse(freshDB(t))
		u.User = url.UserPassword("rewind_password_test", secret)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if c, err := pgconn.Connect(ctx, u.String()); err == nil {
			c.Close(ctx)
			t.Skip("this cluster does not check rewind_password_test's password (pg.sh sets that up)")
		}
		err := checkOpenFails(t, u.String(), u.Host, strings.TrimPrefix(u.Path, "/"), "refused the password")
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "28P01" {
			t.Errorf("error does not unwrap to the server's 28P01: %v", err)
		}
	})

	t.Run("server without plan_cache_mode", func(t *testing.T) {
		t.Parallel()
		addr, got := fakeOldServer(t)
		checkOpenFails(t, "postgres://bob:"+secret+"@"+addr+"/appdb?sslmode=disable", addr, "appdb", "refused the password")
		var modes []string
		for len(modes) < 2 {
			select {
			case m := <-got:
				modes = append(modes, m)
				continue
			case <-time.After(time.Second):
			}
			break
		}
		if !slices.Equal(modes, []string{"force_generic_plan", ""}) {
			t.Errorf("the server got plan_cache_mode %q; want force_generic_plan, then none", modes)
		}
	})

	t.Run("missing database", func(t *testing.T) {
		t.Parallel()
		u, _ := url.Parse(adminURL(t))
		u.Path = "/rewind_no_such_db"
		checkOpenFails(t, u.String(), u.Host, "rewind_no_such_db", "does not exist", "createdb")
	})

}

// fakeAuthServer speaks just enough of the protocol to ask for a cleartext
// password and refuse it as PostgreSQL does. It sends the password it got.
func fakeAuthServer(t *testing.T) (string, <-chan string) {
	return fakeServer(t, func(be *pgproto3.Backend, startup *pgproto3.StartupMessage, got chan<- string) {
		user := startup.Parameters["user"]
		be.Send(&pgproto3.AuthenticationCleartextPassword{})
		if err := be.Flush(); err != nil {
			return
		}
		if err := be.SetAuthType(pgproto3.AuthTypeCleartextPassword); err != nil {
			return
		}
		pm, err := be.Receive()
		if err != nil {
			return
		}
		if p, ok := pm.(*pgproto3.PasswordMessage); ok {
			got <- p.Password
		}
		be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "28P01",
			Message: fmt.Sprintf("password authentication failed for user %q", user)})
		_ = be.Flush()
	})
}

// fakeOldServer is a server from before PostgreSQL 12: it refuses the
// startup parameter plan_cache_mode, and every password. It sends the
// plan_cache_mode of each startup.
func fakeOldServer(t *testing.T) (string, <-chan string) {
	return fakeServer(t, func(be *pgproto3.Backend, startup *pgproto3.StartupMessage, got chan<- string) {
		mode := startup.Parameters["plan_cache_mode"]
		got <- mode
		refusal := &pgproto3.ErrorResponse{Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: "28P01", Message: "password authentication failed"}
		if mode != "" {
			refusal.Code, refusal.Message = "42704", `unrecognized configuration parameter "plan_cache_mode"`
		}
		be.Send(refusal)
		_ = be.Flush()
	})
}

// fakeServer listens on a loopback port until the test ends and answers
// each connection's startup message with serve, which may send on got.
func fakeServer(t *testing.T, serve func(be *pgproto3.Backend, startup *pgproto3.StartupMessage, got chan<- string)) (string, <-chan string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	got := make(chan string, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				be := pgproto3.NewBackend(c, c)
				msg, err := be.ReceiveStartupMessage()
				if err != nil {
					return
				}
				if startup, ok := msg.(*pgproto3.StartupMessage); ok {
					serve(be, startup, got)
				}
			}()
		}
	}()
	return l.Addr().String(), got
}
