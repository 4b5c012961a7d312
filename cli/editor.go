package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// inEditor writes text to a temp file named name, opens it in the user's
// editor ($VISUAL, then $EDITOR, then vi; run by sh, so it may carry
// arguments) and returns what was saved. undone says what did not happen
// when the editor fails ("nothing was approved").
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
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the edited %s: %w", name, err)
	}
	return b, nil
}
