package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// A test binary that panics, is killed or hits -timeout never runs Run's
// drops: its databases (templates, pooled copies, a test's own) would stay
// on a developer's persistent server forever. So each binary holds, on a
// session of its own for its whole life, an advisory lock on a random key,
// and comments every database it creates with that key. The server
// releases the lock when the binary's process ends, however it ends; the
// next binary that creates a database drops every commented database whose
// owner's lock it can take. A name prefix would not do: another binary
// running now uses the same prefixes.

// lockClass is the first half of every owner lock's key ("rwnd"), so the
// keys stay apart from any other advisory lock on the server.
const lockClass = 0x72776e64

// commentMark starts the comment on a database a test binary created:
// then the owner's key and the database its lock is in (an advisory lock
// is a database's own, so a binary whose admin URL names another database
// cannot see this one's lock and must not judge it).
const commentMark = "rewind pgtest owner "

var owner struct {
	sync.Mutex
	url  string
	mark string
	conn *pgx.Conn
	old  []*pgx.Conn // owner sessions of URLs used before
}

// own takes this binary's owner lock on the server adminURL names (once),
// sweeps what dead binaries left, and returns the comment its databases
// get.
func own(ctx context.Context, adminURL string) (string, error) {
	owner.Lock()
	defer owner.Unlock()
	if owner.conn != nil && owner.url == adminURL {
		return owner.mark, nil
	}
	if owner.conn != nil {
		// Its databases may outlive this switch: its lock must too.
		owner.old = append(owner.old, owner.conn)
		owner.conn = nil
	}
	cfg, err := pgx.ParseConfig(adminURL)
	if err != nil {
		return "", fmt.Errorf("REWIND_TEST_POSTGRES must be a postgres:// URL: %w", err)
	}
	// A server that ends idle sessions would free the lock of a binary
	// still running, and the next sweep would drop its databases.
	cfg.RuntimeParams["idle_session_timeout"] = "0"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil && strings.Contains(err.Error(), "idle_session_timeout") {
		delete(cfg.RuntimeParams, "idle_session_timeout") // before PostgreSQL 14: no such setting
		conn, err = pgx.ConnectConfig(ctx, cfg)
	}
	if err != nil {
		return "", fmt.Errorf("connect to the test server: %w", err)
	}
	var in string
	if err := conn.QueryRow(ctx, "select current_database()").Scan(&in); err != nil {
		conn.Close(ctx)
		return "", fmt.Errorf("read the test server's admin database: %w", err)
	}
	for {
		var b [4]byte
		_, _ = rand.Read(b[:])
		key := int32(binary.LittleEndian.Uint32(b[:]))
		var got bool
		if err := conn.QueryRow(ctx, "select pg_try_advisory_lock($1, $2)", lockClass, key).Scan(&got); err != nil {
			conn.Close(ctx)
			return "", fmt.Errorf("take the test binary's owner lock: %w", err)
		}
		if got {
			owner.url, owner.conn = adminURL, conn
			owner.mark = commentMark + strconv.Itoa(int(key)) + " " + in
			break
		}
	}
	if err := sweep(ctx, conn, adminURL, in); err != nil {
		// Leftovers cost disk, not correctness: say so and go on.
		fmt.Fprintln(os.Stderr, "pgtest: drop the databases of test binaries that died:", err)
	}
	return owner.mark, nil
}

// sweep drops every database a test binary created whose owner lock is
// free: that binary's session, and so its process, has ended.
func sweep(ctx context.Context, conn *pgx.Conn, adminURL, in string) error {
	rows, err := conn.Query(ctx, `select datname, shobj_description(oid, 'pg_database') from pg_database
where shobj_description(oid, 'pg_database') like $1`, commentMark+"%")
	if err != nil {
		return err
	}
	type left struct {
		name string
		key  int32
	}
	var dead []left
	for rows.Next() {
		var name, comment string
		if err := rows.Scan(&name, &comment); err != nil {
			rows.Close()
			return err
		}
		key, lockIn, _ := strings.Cut(strings.TrimPrefix(comment, commentMark), " ")
		k, err := strconv.ParseInt(key, 10, 32)
		if err != nil || lockIn != in {
			continue // not a comment this code wrote, or its lock is elsewhere
		}
		dead = append(dead, left{name, int32(k)})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, d := range dead {
		var free bool
		if err := conn.QueryRow(ctx, "select pg_try_advisory_lock($1, $2)", lockClass, d.key).Scan(&free); err != nil {
			return err
		}
		if !free {
			continue // its binary is running
		}
		err := dropDB(ctx, adminURL, d.name)
		if _, uerr := conn.Exec(ctx, "select pg_advisory_unlock($1, $2)", lockClass, d.key); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// disown ends the owner session (for Run, after its drops).
func disown() {
	owner.Lock()
	defer owner.Unlock()
	for _, c := range append(owner.old, owner.conn) {
		if c != nil {
			c.Close(context.Background())
		}
	}
	owner.conn, owner.old = nil, nil
}
