package ticket

// Source versions (seed 002): every tool result records the back-office
// record it read and that record's version, so a resume and the approval
// gate can tell work built on data that has since changed.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// BaseVersion is the version of a source nobody has bumped.
const BaseVersion = 1

// Sources is the versioned back office the mock's tools read: records
// named KIND/REF (orders/SO20260901), each at a version that grows when
// the record changes. The fixture data a tool returns depends on the
// version, so a re-read sees the change.
type Sources interface {
	// Versions returns the version of every source bumped so far; any
	// other source is at BaseVersion.
	Versions(ctx context.Context) (map[string]int, error)
	// Bump moves a source to its next version and returns it.
	Bump(ctx context.Context, id string) (int, error)
}

// SourceKinds are the kinds of record the tools read, by tool.
var SourceKinds = map[string]string{
	"lookup_order":    "orders",
	"cancel_check":    "orders",
	"shipping_events": "shipments",
	"refund_policy":   "refunds",
	"address_change":  "addresses",
	"invoice_lookup":  "invoices",
	"warranty_check":  "warranties",
	"payment_lookup":  "payments",
	"search_kb":       "kb",
}

// SourceOf names the record tool reads for order ref.
func SourceOf(tool, ref string) string {
	kind, ok := SourceKinds[tool]
	if !ok {
		kind = "kb"
	}
	if ref == "" {
		ref = "-"
	}
	return kind + "/" + ref
}

// ErrBadSource is matched by errors.Is for a source name that is not
// KIND/REF with a kind a tool reads.
var ErrBadSource = errors.New("not a source name")

// CheckSource says whether id names a source: KIND/REF.
func CheckSource(id string) error {
	kind, ref, ok := strings.Cut(id, "/")
	known := false
	for _, k := range SourceKinds {
		known = known || k == kind
	}
	if !ok || !known || strings.TrimSpace(ref) == "" || strings.ContainsAny(id, " \t\r\n") {
		return fmt.Errorf("%w: %q: name it KIND/ORDER, e.g. shipments/SO20260901, with KIND one of %s", ErrBadSource, clip(id, 64), strings.Join(sourceKindList(), ", "))
	}
	return nil
}

func sourceKindList() []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range SourceKinds {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// versionOf is id's version in vs.
func versionOf(vs map[string]int, id string) int {
	if v, ok := vs[id]; ok && v > 0 {
		return v
	}
	return BaseVersion
}

// SourceAccess is a back office that can withdraw a person's access to a
// source (and give it back): a run's pending task that would read a
// withdrawn source is refused before any task runs (engine.OnAccess), and
// a tool call that would read one is not made. Both Sources of this
// package are one.
type SourceAccess interface {
	// Withdrawn lists the sources whose access is withdrawn.
	Withdrawn(ctx context.Context) (map[string]bool, error)
	// SetWithdrawn withdraws access to a source, or gives it back.
	SetWithdrawn(ctx context.Context, id string, withdrawn bool) error
}

// MemorySources keeps versions in this process: for tests and the
// memory: store.
type MemorySources struct {
	mu        sync.Mutex
	vs        map[string]int
	withdrawn map[string]bool
}

// NewMemorySources starts every source at BaseVersion.
func NewMemorySources() *MemorySources {
	return &MemorySources{vs: map[string]int{}, withdrawn: map[string]bool{}}
}

// Withdrawn implements SourceAccess.
func (m *MemorySources) Withdrawn(context.Context) (map[string]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.withdrawn), nil
}

// SetWithdrawn implements SourceAccess.
func (m *MemorySources) SetWithdrawn(_ context.Context, id string, withdrawn bool) error {
	if err := CheckSource(id); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if withdrawn {
		m.withdrawn[id] = true
	} else {
		delete(m.withdrawn, id)
	}
	return nil
}

// Versions implements Sources.
func (m *MemorySources) Versions(context.Context) (map[string]int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int, len(m.vs))
	for k, v := range m.vs {
		out[k] = v
	}
	return out, nil
}

// Bump implements Sources.
func (m *MemorySources) Bump(_ context.Context, id string) (int, error) {
	if err := CheckSource(id); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v, err := nextVersion(id, versionOf(m.vs, id), "")
	if err != nil {
		return 0, err
	}
	m.vs[id] = v
	return v, nil
}

// nextVersion is the version after v of source id, unless v is the
// highest an int holds (a bump would wrap to a negative version). file
// names where the versions are kept, "" for this process's memory.
func nextVersion(id string, v int, file string) (int, error) {
	if v == math.MaxInt {
		where := "this process's memory"
		if file != "" {
			where = file
		}
		return 0, fmt.Errorf("bump %s: it is at v%d, the highest version there is: a bump would wrap to a negative one; set it back in %s", id, v, where)
	}
	return v + 1, nil
}

// checkVersions refuses a version no bump makes: below BaseVersion (a
// negative one, written by hand or wrapped by an older rewind's bump).
func checkVersions(file string, vs map[string]int) error {
	for _, id := range slices.Sorted(maps.Keys(vs)) {
		if v := vs[id]; v < BaseVersion {
			return fmt.Errorf("source versions %s: %s is at v%d, but versions start at v%d and only go up: set it to %d or more, or remove it (it then reads as v%d)", file, id, v, BaseVersion, BaseVersion, BaseVersion)
		}
	}
	return nil
}

// FileSources keeps versions in a small JSON file, so every process that
// opens the same store (the workers of a drill, the TUI's worker, a
// `rewind source bump` in another terminal) sees the same versions. A bump
// holds an exclusive lock on PATH.lock while it reads and rewrites the
// file; the file is replaced by a rename, so a reader never sees half of
// it and needs no lock.
type FileSources struct{ Path string }

// sourcesFile is the file's shape. Withdrawn, the sources whose access
// is withdrawn, is left out when there are none (a rewind before it
// reads the file as before).
type sourcesFile struct {
	Format    string         `json:"format"`
	Versions  map[string]int `json:"versions"`
	Withdrawn []string       `json:"withdrawn,omitempty"`
}

const sourcesFormat = "rewind-sources/1"

// Versions implements Sources; a missing file is every source at
// BaseVersion.
func (f FileSources) Versions(ctx context.Context) (map[string]int, error) {
	doc, err := f.read(ctx)
	return doc.Versions, err
}

// Withdrawn implements SourceAccess.
func (f FileSources) Withdrawn(ctx context.Context) (map[string]bool, error) {
	doc, err := f.read(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(doc.Withdrawn))
	for _, id := range doc.Withdrawn {
		out[id] = true
	}
	return out, nil
}

// read reads the file; a missing one is every source at BaseVersion,
// none withdrawn.
func (f FileSources) read(ctx context.Context) (sourcesFile, error) {
	doc := sourcesFile{Format: sourcesFormat, Versions: map[string]int{}}
	if err := ctx.Err(); err != nil {
		return doc, err
	}
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return doc, fmt.Errorf("read source versions %s: %w", f.Path, err)
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Format != sourcesFormat {
		return doc, fmt.Errorf("source versions %s is not a %s file: move it away (every source then reads as v%d)", f.Path, sourcesFormat, BaseVersion)
	}
	if doc.Versions == nil {
		doc.Versions = map[string]int{}
	}
	return doc, checkVersions(f.Path, doc.Versions)
}

// Bump implements Sources.
func (f FileSources) Bump(ctx context.Context, id string) (int, error) {
	var v int
	err := f.update(ctx, "bump "+id, id, func(doc *sourcesFile) (err error) {
		v, err = nextVersion(id, versionOf(doc.Versions, id), f.Path)
		doc.Versions[id] = v
		return err
	})
	return v, err
}

// SetWithdrawn implements SourceAccess.
func (f FileSources) SetWithdrawn(ctx context.Context, id string, withdrawn bool) error {
	return f.update(ctx, "withdraw "+id, id, func(doc *sourcesFile) error {
		doc.Withdrawn = slices.DeleteFunc(doc.Withdrawn, func(w string) bool { return w == id })
		if withdrawn {
			doc.Withdrawn = append(doc.Withdrawn, id)
			slices.Sort(doc.Withdrawn)
		}
		return nil
	})
}

// update changes the file by change, for source id: it holds an
// exclusive lock on PATH.lock while it reads and rewrites the file, and
// replaces it by a rename. what names the change in errors.
func (f FileSources) update(ctx context.Context, what, id string, change func(*sourcesFile) error) error {
	if err := CheckSource(id); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	lock, err := os.OpenFile(f.Path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("%s: lock %s: %w", what, f.Path, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("%s: lock %s: %w", what, f.Path, err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }() // closing unlocks too
	doc, err := f.read(ctx)
	if err != nil {
		return err
	}
	if err := change(&doc); err != nil {
		return err
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return f.replace(what, append(b, '\n'))
}

// replace writes b to a temporary file beside the file and renames it
// over the file.
func (f FileSources) replace(what string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), filepath.Base(f.Path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: write %s: %w", what, tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: write %s: %w", what, tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// SourceRead is a source a tool result came from, at the version read.
type SourceRead struct {
	ID      string `json:"id"`
	Version int    `json:"version"`
}

// SourceChange is a source that moved on since it was read.
type SourceChange struct {
	ID       string
	From, To int
	// By names who read it (a subtask), when known.
	By string
}

func (c SourceChange) String() string {
	s := fmt.Sprintf("%s v%d → v%d", c.ID, c.From, c.To)
	if c.By != "" {
		s += " (read by " + c.By + ")"
	}
	return s
}

// changed lists the sources in read whose version is not the current one,
// sorted by id.
func changed(read map[string]int, current map[string]int) []SourceChange {
	var out []SourceChange
	for id, v := range read {
		if now := versionOf(current, id); now != v {
			out = append(out, SourceChange{ID: id, From: v, To: now})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func describeChanges(cs []SourceChange) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, ", ")
}
