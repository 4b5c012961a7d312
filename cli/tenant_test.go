package cli_test

import (
	"strings"
	"testing"
)

// Through the CLI, a tenant's threads are the only ones its commands see:
// another tenant's thread is not found by any read, listed by none, and a
// write to it is refused without touching it; the default tenant keeps the
// threads written without --tenant.
func TestTenantsSeeOnlyTheirThreads(t *testing.T) {
	t.Parallel()
	_, spec := dbSpec(t)
	env := []string{"REWIND_STORE=" + spec}
	must := func(env []string, args ...string) string {
		t.Helper()
		r := rewind(t, env, args...)
		if r.code != 0 {
			t.Fatalf("rewind %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r.stdout
	}
	must(env, "run", "--thread", "t-default", "--input", "Where is my parcel SO20260901?")
	must(env, "tenant", "add", "acme")
	if out := must(env, "tenant", "list"); out != "default\nacme\n" {
		t.Errorf("tenant list = %q, want default and acme", out)
	}
	acme := append([]string{"REWIND_TENANT=acme"}, env...)
	must(acme, "run", "--thread", "t-acme", "--input", "What is the order status of SO20260901?")
	before := snapshot(t, env, "t-default")

	if out := must(env, "threads"); !strings.Contains(out, "t-default") || strings.Contains(out, "t-acme") {
		t.Errorf("the default tenant's threads:\n%s\nwant t-default only", out)
	}
	if out := must(acme, "threads"); !strings.Contains(out, "t-acme") || strings.Contains(out, "t-default") {
		t.Errorf("acme's threads:\n%s\nwant t-acme only", out)
	}
	for _, args := range [][]string{
		{"log", "t-default"}, {"show", "t-default", "1"}, {"events", "t-default"}, {"search", "t-default", "parcel"},
		{"runs", "t-default"}, {"rm", "t-default"}, {"prune", "t-default", "--keep-last", "1"},
		{"fork", "t-default", "1", "--input", "hi"}, {"resume", "t-default"},
		{"run", "--thread", "t-default", "--input", "hi"},
	} {
		r := rewind(t, acme, args...)
		msg := strings.TrimSpace(r.stderr)
		if r.code == 0 || !strings.Contains(msg, "not found") || strings.Count(msg, "\n") != 0 {
			t.Errorf("acme's rewind %s: exit %d, %q; want one line saying not found", strings.Join(args, " "), r.code, msg)
		}
	}
	// --tenant names it too, over $REWIND_TENANT.
	if r := rewind(t, env, "log", "t-acme", "--tenant", "acme"); r.code != 0 {
		t.Errorf("log --tenant acme of acme's thread: exit %d: %s", r.code, r.stderr)
	}
	if r := rewind(t, acme, "log", "t-acme", "--tenant", "default"); r.code == 0 {
		t.Error("log --tenant default of acme's thread succeeded")
	}
	if after := snapshot(t, env, "t-default"); after != before {
		t.Error("another tenant's commands changed the default tenant's thread")
	}
}
