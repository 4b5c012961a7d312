package cli

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"os/exec"
	"slices"
	"testing"
)

// For the tests that drive the built binary (package cli_test).

// FreshPostgres is freshPostgres.
func FreshPostgres(t *testing.T) string { return freshPostgres(t) }

// SharedStores is sharedStores.
func SharedStores(prefix string) map[string]func(t *testing.T) string { return sharedStores(prefix) }

// CommandPaths is every command's words after `rewind` ("" for rewind
// alone), sorted.
func CommandPaths() []string {
	return slices.Sorted(maps.Keys(commands()))
}

// SetBenchExe makes a bench's new processes run path (the built rewind),
// not the test binary, and runBuilt run it.
func SetBenchExe(path string) {
	built = path
	benchExe = func() (string, error) { return path, nil }
}

// built is the rewind binary cli_test's TestMain built, without -race.
var built string

// runBuilt runs the built binary in a process of its own: a big fixture
// (a bench of many turns) costs a fraction there of what it costs in this
// raced test binary.
func runBuilt(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runBuiltEnv(t, nil, args...)
}

// runBuiltEnv is runBuilt with env over this process's environment (a
// later KEY=value wins).
func runBuiltEnv(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(built, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errb.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}
