package pgtest

import (
	"bufio"
	"context"
	"os"
	osexec "os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A test binary killed mid-run (a panic, -timeout, ^C) leaves its
// databases; the next binary drops them, and never one of a binary that
// is still running.
func TestDeadBinarysDatabasesAreDropped(t *testing.T) {
	admin := Admin(t)
	if os.Getenv("PGTEST_SWEEP_CHILD") != "" {
		u, _, err := Create(context.Background(), admin, "rewind_sweepchild")
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("URL " + u + "\n")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent kills it
		return
	}
	mine := Fresh(t, "rewind_sweepmine")

	child := osexec.Command(os.Args[0], "-test.run=^TestDeadBinarysDatabasesAreDropped$")
	child.Env = append(os.Environ(), "PGTEST_SWEEP_CHILD=1")
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var theirs string
	for sc := bufio.NewScanner(out); sc.Scan(); {
		if u, ok := strings.CutPrefix(sc.Text(), "URL "); ok {
			theirs = u
			break
		}
	}
	if theirs == "" {
		_ = child.Process.Kill()
		_ = child.Wait()
		t.Fatal("the child binary printed no database")
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var in string
	if err := conn.QueryRow(ctx, "select current_database()").Scan(&in); err != nil {
		t.Fatal(err)
	}
	if err := sweep(ctx, conn, admin, in); err != nil {
		t.Fatal(err)
	}
	if !exists(t, theirs) || !exists(t, mine) {
		t.Fatal("a sweep dropped the database of a binary that is running")
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	// The server sees the killed client's session end on its own time.
	for deadline := time.Now().Add(time.Minute); exists(t, theirs); {
		if time.Now().After(deadline) {
			t.Fatalf("%s, left by a killed test binary, was never dropped", Name(theirs))
		}
		time.Sleep(50 * time.Millisecond)
		if err := sweep(ctx, conn, admin, in); err != nil {
			t.Fatal(err)
		}
	}
	if !exists(t, mine) {
		t.Fatal("the sweep dropped this binary's own database")
	}
}
