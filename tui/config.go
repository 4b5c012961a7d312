package tui

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"rewind/themes"
	"rewind/tui/termtext"
)

// Config is the user's TUI settings file,
// $XDG_CONFIG_HOME/rewind/config.toml (~/.config/rewind/config.toml), a
// small TOML subset of `key = "value"` lines:
//
//	# rewind TUI
//	theme = "light"   # dark, light, high-contrast, no-color
//	mouse = true
type Config struct {
	Theme string
	// Mouse is nil when unset (default: on).
	Mouse *bool
}

// ConfigPath is where the config file lives.
func ConfigPath() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "rewind", "config.toml")
}

// LoadConfig reads the config file; a missing file is an empty config.
func LoadConfig(path string) (Config, error) {
	var c Config
	if path == "" {
		return c, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(stripComment(sc.Text()))
		if line == "" || strings.HasPrefix(line, "[") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return c, fmt.Errorf("config %s, line %d: want `key = value`, got %q", path, n, termtext.Line(line))
		}
		k = strings.TrimSpace(k)
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		switch k {
		case "theme":
			if _, err := themes.Get(v); err != nil {
				return c, fmt.Errorf("config %s, line %d: %w", path, n, err)
			}
			c.Theme = v
		case "mouse":
			b := v == "true" || v == "on" || v == "yes"
			if !b && v != "false" && v != "off" && v != "no" {
				return c, fmt.Errorf("config %s, line %d: mouse is true or false, got %q", path, n, termtext.Line(v))
			}
			c.Mouse = &b
		default:
			// Unknown keys are ignored so a newer config still loads.
		}
	}
	if err := sc.Err(); err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// stripComment drops a # comment that is not inside quotes.
func stripComment(s string) string {
	inQuote := rune(0)
	for i, r := range s {
		switch {
		case inQuote != 0 && r == inQuote:
			inQuote = 0
		case inQuote == 0 && (r == '"' || r == '\''):
			inQuote = r
		case inQuote == 0 && r == '#':
			return s[:i]
		}
	}
	return s
}

// ResolveTheme picks the theme: the --theme flag, else the config file, else
// no-color when NO_COLOR is set (https://no-color.org: explicit settings
// win over it), else the default.
func ResolveTheme(flag string, cfg Config, getenv func(string) string) (*themes.Theme, error) {
	switch {
	case strings.TrimSpace(flag) != "":
		return themes.Get(flag)
	case cfg.Theme != "":
		return themes.Get(cfg.Theme)
	case getenv("NO_COLOR") != "":
		return themes.Get(themes.NoColor)
	}
	return themes.Get(themes.Default)
}
