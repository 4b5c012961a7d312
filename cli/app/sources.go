package app

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"rewind/engine/ticket"
	"rewind/store/backend"
)

// EnvSources names the file of source versions, overriding where the
// store's spec puts it.
const EnvSources = "REWIND_SOURCES"

// SourcesPath is the file that keeps the versions of the records the
// mock's tools read (see ticket.FileSources): $REWIND_SOURCES when set;
// for sqlite:PATH, PATH.sources.json beside the store; for PostgreSQL, a
// file under the state directory named after the server and database.
// Every process that opens the same store spec (the workers of a drill, a
// TUI's worker, `rewind source bump` in another terminal) finds the same
// file, so they agree on the versions without a table in the store. ""
// for a memory: store, whose versions live in its process.
func (s Store) SourcesPath() string {
	if p := strings.TrimSpace(os.Getenv(EnvSources)); p != "" {
		return p
	}
	spec := s.Spec
	switch {
	case !s.Shared():
		return ""
	case strings.HasPrefix(spec, "sqlite:"):
		return strings.TrimPrefix(spec, "sqlite:") + ".sources.json"
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		return filepath.Join(filepath.Dir(backend.DefaultPath()), "sources", pgName(spec)+".sources.json")
	}
	return spec + ".sources.json" // a bare sqlite path
}

// pgName is a file name for a PostgreSQL spec: its host, port and
// database (whoever connects, with whatever options: one database, one set
// of versions), made safe for a file name, and a hash of them so that
// names that only differ in unsafe characters stay apart.
func pgName(spec string) string {
	u, err := url.Parse(spec)
	if err != nil {
		sum := sha256.Sum256([]byte(backend.Describe(spec)))
		return "postgres-" + hex.EncodeToString(sum[:6])
	}
	db := strings.TrimPrefix(u.Path, "/")
	sum := sha256.Sum256([]byte(u.Host + "/" + db))
	return unsafeChars().ReplaceAllString("postgres-"+u.Hostname()+"-"+u.Port()+"-"+db, "_") + "-" + hex.EncodeToString(sum[:4])
}

var unsafeChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]`) })

// Sources is the store's source versions (see SourcesPath).
func (s Store) Sources() ticket.Sources {
	if p := s.SourcesPath(); p != "" {
		return ticket.FileSources{Path: p}
	}
	return ticket.NewMemorySources()
}
