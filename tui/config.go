package tui

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"rewind/themes"
	"rewind/tui/termtext"
)

// configHint says where keys are rebound, for the help screen.
const configHint = "the config file's [keys] table ($XDG_CONFIG_HOME/rewind/config.toml)"

// Config is the user's TUI settings file,
// $XDG_CONFIG_HOME/rewind/config.toml (~/.config/rewind/config.toml), in
// TOML:
//
//	# rewind TUI
//	theme = "light"   # dark, light, high-contrast, no-color; T saves it here
//	mouse = false     # no mouse capture: the terminal selects text
//
//	[keys]            # rebind a key of the thread view (names: `?` lists them in README)
//	kill = ["ctrl+k"]
//	up = ["up", "k"]
type Config struct {
	Theme string
	// Mouse is nil when unset (default: on).
	Mouse *bool
	// Keys rebinds keys of the thread view, by keyNames' name.
	Keys map[string][]string
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

// LoadConfig reads the config file; a missing file is an empty config. An
// error names the file, the line and the fix.
func LoadConfig(path string) (Config, error) {
	var c Config
	if path == "" {
		return c, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("config %s: %w", path, err)
	}
	return parseConfig(path, string(data))
}

func parseConfig(path, text string) (Config, error) {
	var c Config
	var raw map[string]any
	if _, err := toml.Decode(text, &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return c, fmt.Errorf("config %s, line %d: %s: the file is TOML: quote text values (theme = \"light\") and write key = value", path, pe.Position.Line, termtext.Line(pe.Message))
		}
		return c, fmt.Errorf("config %s: %w: the file is TOML (key = value)", path, err)
	}
	// The line scanner this parser replaced ignored table headers, so a
	// [tui] table holding theme and mouse was read as the top level: it
	// still is.
	if legacy, ok := raw["tui"].(map[string]any); ok {
		delete(raw, "tui")
		for k, v := range legacy {
			if _, dup := raw[k]; !dup {
				raw[k] = v
			}
		}
	}
	at := func(section, k string) string {
		n := lineOf(text, section, k)
		if n == 0 && section == "" {
			n = lineOf(text, "tui", k)
		}
		return fmt.Sprintf("config %s, line %d", path, n)
	}
	names := sortedKeys(raw)
	for _, k := range names {
		v := raw[k]
		switch k {
		case "theme":
			s, ok := v.(string)
			if !ok {
				return c, fmt.Errorf("%s: theme is a quoted name, e.g. theme = \"light\" (one of %s)", at("", k), strings.Join(themes.Names(), ", "))
			}
			if _, err := themes.Get(s); err != nil {
				return c, fmt.Errorf("%s: %w", at("", k), err)
			}
			c.Theme = s
		case "mouse":
			b, ok := v.(bool)
			if !ok {
				// The line scanner this parser replaced took on/off and yes/no.
				s, _ := v.(string)
				switch strings.ToLower(s) {
				case "on", "yes", "true":
					b, ok = true, true
				case "off", "no", "false":
					b, ok = false, true
				}
			}
			if !ok {
				return c, fmt.Errorf("%s: mouse is true or false (mouse = false lets the terminal select text)", at("", k))
			}
			c.Mouse = &b
		case "keys":
			tbl, ok := v.(map[string]any)
			if !ok {
				return c, fmt.Errorf("%s: keys is a table: write [keys] and then name = [\"key\", …] lines", at("", k))
			}
			keys, err := parseKeys(tbl, func(name string) string { return at("keys", name) })
			if err != nil {
				return c, err
			}
			c.Keys = keys
		default:
			return c, fmt.Errorf("%s: unknown setting %q: the settings are theme, mouse and [keys]", at("", k), termtext.Line(k))
		}
	}
	if len(c.Keys) > 0 {
		k := newThreadKeys()
		if err := k.rebind(c.Keys); err != nil {
			var kc *keyConflict
			if errors.As(err, &kc) {
				name := kc.b
				if _, ok := c.Keys[name]; !ok {
					name = kc.a
				}
				return c, fmt.Errorf("%s: %w", at("keys", name), err)
			}
			return c, fmt.Errorf("config %s: %w", path, err)
		}
	}
	return c, nil
}

// parseKeys reads the [keys] table: name = "key" or name = ["key", …].
func parseKeys(tbl map[string]any, at func(string) string) (map[string][]string, error) {
	known := map[string]bool{}
	var all []string
	k := newThreadKeys()
	for _, n := range k.keyNames() {
		known[n.name] = true
		all = append(all, n.name)
	}
	out := map[string][]string{}
	for _, name := range sortedKeys(tbl) {
		if !known[name] {
			return nil, fmt.Errorf("%s: no key is named %q: the names are %s", at(name), termtext.Line(name), strings.Join(all, ", "))
		}
		var keys []string
		switch v := tbl[name].(type) {
		case string:
			keys = []string{v}
		case []any:
			for _, e := range v {
				s, ok := e.(string)
				if !ok {
					keys = nil
					break
				}
				keys = append(keys, s)
			}
		}
		for _, s := range keys {
			if strings.TrimSpace(s) == "" && s != " " {
				keys = nil
			}
		}
		if len(keys) == 0 {
			return nil, fmt.Errorf("%s: %s takes a key or a list of keys, e.g. %s = [\"ctrl+k\", \"X\"]", at(name), name, name)
		}
		out[name] = keys
	}
	return out, nil
}

// rebind applies the config's keys; a key bound to two actions is an
// error naming both.
func (k *threadKeys) rebind(keys map[string][]string) error {
	byName := map[string]*keyName{}
	names := k.keyNames()
	for i := range names {
		byName[names[i].name] = &names[i]
	}
	for name, ks := range keys {
		n := byName[name]
		if n == nil {
			return fmt.Errorf("[keys]: no key is named %q", termtext.Line(name))
		}
		*n.b = bind(n.b.Help().Desc, ks...)
	}
	owner := map[string]string{}
	for _, n := range names {
		for _, key := range n.b.Keys() {
			if o, ok := owner[key]; ok {
				return &keyConflict{key: key, a: o, b: n.name}
			}
			owner[key] = n.name
		}
	}
	return nil
}

// keyConflict is one key bound to two actions.
type keyConflict struct{ key, a, b string }

func (e *keyConflict) Error() string {
	return fmt.Sprintf("[keys]: %q would do both %s and %s: bind one of them to another key", termtext.Line(e.key), e.a, e.b)
}

// lineOf finds the line where key is set in section ("" is the top),
// for errors; 0 when not found.
func lineOf(text, section, key string) int {
	cur := ""
	keyRE := regexp.MustCompile(`^\s*("?)` + regexp.QuoteMeta(key) + `("?)\s*=`)
	for i, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			cur = strings.Trim(strings.TrimSpace(strings.SplitN(t, "#", 2)[0]), "[] ")
			continue
		}
		if cur == section && keyRE.MatchString(l) {
			return i + 1
		}
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// themeConfig is what this session lets T do with the theme: the config
// file it saves the choice to ("" saves none), NO_COLOR (the theme stays
// no-color, T cannot change it) and the terminal's background.
type themeConfig struct {
	path    string
	noColor bool
	// terminalBg is the terminal's background (#rrggbb, "" unknown): a
	// theme too faint on it is shown but not saved.
	terminalBg string
}

// SaveTheme writes theme = "NAME" into the config file at path, keeping
// every other line (comments too); the file and its directory are made
// when missing. The file is checked again before it replaces the old one.
func SaveTheme(path, name string) error {
	if path == "" {
		return errors.New("no config file: set XDG_CONFIG_HOME or HOME to save the theme")
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("save theme to %s: %w", path, err)
	}
	line := fmt.Sprintf("theme = %q", name)
	lines := strings.Split(string(old), "\n")
	if len(old) == 0 {
		lines = []string{"# rewind TUI (T saves the theme here)", line, ""}
	} else if n := max(lineOf(string(old), "", "theme"), lineOf(string(old), "tui", "theme")); n > 0 {
		comment := ""
		if i := strings.Index(lines[n-1], "#"); i > 0 {
			comment = "  " + strings.TrimSpace(lines[n-1][i:])
		}
		lines[n-1] = line + comment
	} else {
		// Top-level keys go before the first table.
		at := len(lines)
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "[") {
				at = i
				break
			}
		}
		lines = append(lines[:at], append([]string{line}, lines[at:]...)...)
	}
	text := strings.Join(lines, "\n")
	if _, err := parseConfig(path, text); err != nil {
		return fmt.Errorf("save theme: the config file would not load (%w): fix it by hand", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("save theme: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.toml")
	if err != nil {
		return fmt.Errorf("save theme: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(text); err != nil {
		tmp.Close()
		return fmt.Errorf("save theme: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save theme: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save theme: %w", err)
	}
	return nil
}

// ResolveTheme picks the theme: NO_COLOR first (https://no-color.org: it
// always wins here), then the --theme flag, else the config file, else the
// default.
func ResolveTheme(flag string, cfg Config, getenv func(string) string) (*themes.Theme, error) {
	switch {
	case getenv("NO_COLOR") != "":
		if strings.TrimSpace(flag) != "" {
			if _, err := themes.Get(flag); err != nil {
				return nil, err
			}
		}
		return themes.Get(themes.NoColor)
	case strings.TrimSpace(flag) != "":
		return themes.Get(flag)
	case cfg.Theme != "":
		return themes.Get(cfg.Theme)
	}
	return themes.Get(themes.Default)
}
