package browse

// Ids as a person gives them back: a checkpoint id or a namespace may be
// given by a unique prefix, or as a short form a reader printed ("1f0a3b2c…
// ab12": its first and last characters; "review:1f0…": a prefix cut
// with …; "review:43a3a66f…ecc4", the browser's namespace). Whatever
// matches exactly wins; a form that matches several is ErrAmbiguous (the
// CLI: exit 2), one that matches none ErrNotFound.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"rewind/store"
)

// ErrAmbiguous is matched (errors.Is) by a prefix that more than one id
// starts with.
var ErrAmbiguous = errors.New("ambiguous")

// IDLister is what a Source may also do: list the checkpoint ids of chain
// c (any order) without reading their listings, so a prefix resolves
// cheaply. Resolve lists History when a Source does not.
type IDLister interface {
	IDs(ctx context.Context, c Chain) ([]string, error)
}

// IDChecker is what a Source may also do: say whether chain c holds
// checkpoint id, reading that one row, so a whole id resolves without
// listing the chain (an exact id wins, as in Match).
type IDChecker interface {
	HasID(ctx context.Context, c Chain, id string) (bool, error)
}

// ThreadFinder is what a Source may also do: read the one thread id (its
// namespaces, as Threads lists them), so a thread given whole is found
// without listing every thread. ok is false when no thread has that id.
type ThreadFinder interface {
	Thread(ctx context.Context, id string) (t Thread, ok bool, err error)
}

// Ellipsis cuts a printed id: "abc…" is a prefix, "abc…xyz" a prefix and
// a suffix.
const Ellipsis = "…"

// Match is the ids among all that given names: the one equal to it, else
// those it is a prefix of, or, given with … (a form a reader printed:
// "A…B", "A…", "n:A…B|m:C…D"), those that start with its first piece,
// end with its last and hold the pieces between in order.
func Match(given string, all []string) []string {
	if slices.Contains(all, given) {
		return []string{given}
	}
	pieces := strings.Split(given, Ellipsis)
	if len(pieces) == 1 {
		pieces = append(pieces, "") // a plain prefix
	}
	var out []string
	for _, id := range all {
		if matches(id, pieces) {
			out = append(out, id)
		}
	}
	return out
}

// matches says whether id starts with pieces[0], ends with the last piece
// and holds the others in order between them, none overlapping.
func matches(id string, pieces []string) bool {
	head, tail := pieces[0], pieces[len(pieces)-1]
	if len(id) < len(head)+len(tail) || !strings.HasPrefix(id, head) || !strings.HasSuffix(id, tail) {
		return false
	}
	rest := id[len(head) : len(id)-len(tail)]
	for _, p := range pieces[1 : len(pieces)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}

// Resolve is the one checkpoint of chain c that given names (Match); ""
// stays "" (the newest). An error names the fix (fix: the command that
// lists them): ErrNotFound when none matches, ErrAmbiguous with a few of
// them when several do.
func Resolve(ctx context.Context, src Source, c Chain, given, fix string) (string, error) {
	if given == "" {
		return "", nil
	}
	if h, ok := src.(IDChecker); ok {
		has, err := h.HasID(ctx, c, given)
		if err != nil {
			return "", err
		}
		if has {
			return given, nil
		}
	}
	ids, err := chainIDs(ctx, src, c)
	if err != nil {
		return "", err
	}
	return One("checkpoint", given, Match(given, ids), c.String(), fix)
}

// chainIDs lists chain c's checkpoint ids: IDLister's, else History's.
func chainIDs(ctx context.Context, src Source, c Chain) ([]string, error) {
	if l, ok := src.(IDLister); ok {
		return l.IDs(ctx, c)
	}
	h, err := src.History(ctx, c, "", 0)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(h))
	for i, l := range h {
		ids[i] = l.ID
	}
	return ids, nil
}

// One is the one id of matched, or the error saying what given matched
// (what: "checkpoint", "namespace"; where names the place searched, fix
// the command that lists them).
func One(what, given string, matched []string, where, fix string) (string, error) {
	switch len(matched) {
	case 1:
		return matched[0], nil
	case 0:
		return "", matchError{fmt.Sprintf("%s %s not found in %s (none is or starts with it): list them with `%s`", what, text(given), where, fix), ErrNotFound}
	}
	slices.Sort(matched)
	shown := make([]string, 0, 4)
	for _, m := range matched[:min(3, len(matched))] {
		shown = append(shown, text(m))
	}
	if len(matched) > 3 {
		shown = append(shown, fmt.Sprintf("… %d more", len(matched)-3))
	}
	return "", matchError{fmt.Sprintf("ambiguous: %s matches %s (%d %ss of %s; give more characters)", text(given), strings.Join(shown, ", "), len(matched), what, where), ErrAmbiguous}
}

// text is an id in an error: bare when it is a plain word of at most 64
// bytes (a UUID, "review:43a3…"), else as store.Name quotes it.
func text(s string) string {
	plain := s != "" && len(s) <= 64
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_.:/@+=,…|", r) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return fmt.Sprint(store.Name(s))
}

// matchError is a one-line message that matches ErrNotFound or
// ErrAmbiguous without saying so.
type matchError struct {
	msg string
	is  error
}

func (e matchError) Error() string        { return e.msg }
func (e matchError) Is(target error) bool { return target == e.is }
