package app

import (
	"fmt"
	"os"
	"strings"

	"rewind/engine/seal"
	"rewind/engine/ticket"
)

// KeyFileEnv names the file of the key that encrypts the sensitive
// channels at rest (--key-file sets it, so the workers a command starts
// read it too).
const KeyFileEnv = "REWIND_KEY_FILE"

// SensitiveEnv chooses the ticket graph's sensitive channels: a comma
// list, or "none"; unset, ticket.DefaultSensitive.
const SensitiveEnv = "REWIND_SENSITIVE"

// Keys are the keys $REWIND_KEY_FILE names, with more (a rekey's old
// key) to open with; nil when none is set and none is given.
func Keys(more ...*seal.Key) (*seal.Keys, error) {
	path := os.Getenv(KeyFileEnv)
	if path == "" {
		if len(more) == 0 {
			return nil, nil
		}
		return seal.NewKeys(nil, more...), nil
	}
	k, err := seal.LoadFile(path)
	if err != nil {
		return nil, err
	}
	return seal.NewKeys(k, more...), nil
}

// TicketOptions are the ticket graph's options from the environment: its
// keys (Keys) and its sensitive channels ($REWIND_SENSITIVE).
func TicketOptions(keys *seal.Keys) ([]ticket.Option, error) {
	opts := []ticket.Option{ticket.WithKeys(keys)}
	v, set := os.LookupEnv(SensitiveEnv)
	if !set {
		return opts, nil
	}
	var chs []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" && f != "none" {
			chs = append(chs, f)
		}
	}
	g := ticket.NewGraph(ticket.WithSensitive(chs...))
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("$%s=%q: %w (the ticket graph's channels: %s)", SensitiveEnv, v, err, strings.Join(g.Channels(), ", "))
	}
	return append(opts, ticket.WithSensitive(chs...)), nil
}
