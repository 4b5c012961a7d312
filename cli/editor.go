package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"rewind/tui/termtext"
)

// inEditor writes text to a temp file named name, opens it in the user's
// editor ($VISUAL, then $EDITOR, then vi; run by sh, so it may carry
// arguments) and returns what was saved: at most termtext.MaxInput bytes,
// the limit of --value-file and --input-file too (a longer file is a usage
// error). undone says what did not happen when the editor fails ("nothing
// was approved").
func inEditor(ctx context.Context, name string, text []byte, undone string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "rewind-edit-")
	if err != nil {
		return nil, fmt.Errorf("edit %s: %w", name, err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, text, 0o600); err != nil {
		return nil, fmt.Errorf("edit %s: %w", name, err)
	}
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", editor+` "$1"`, "editor", path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("the editor (%s) exited with %d: %s", editor, exit.ExitCode(), undone)
		}
		return nil, fmt.Errorf("run the editor %q: %w: %s; set $EDITOR to one you have", editor, err, undone)
	}
	b, err := readAtMost(path, termtext.MaxInput)
	if errors.Is(err, errTooLong) {
		return nil, usagef("the edited %s is longer than the %s (%d bytes) one value may hold: %s; shorten it", name, termtext.Size(termtext.MaxInput), termtext.MaxInput, undone)
	}
	if err != nil {
		return nil, fmt.Errorf("read the edited %s: %w", name, err)
	}
	return b, nil
}

// errTooLong: a file holds more than readAtMost takes.
var errTooLong = errors.New("too long")

// readAtMost reads the file at path if it holds at most limit bytes, and
// reads no more than limit+1 of it to tell (an editor may have saved
// gigabytes).
func readAtMost(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	switch {
	case err != nil:
		return nil, err
	case len(b) > limit:
		return nil, errTooLong
	}
	return b, nil
}
