package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// Tenants. A thread belongs to one tenant; a handle that ForTenant opened
// for a tenant reads and writes that tenant's threads only, and a thread
// of another tenant is not found, as if it did not exist. Thread ids stay
// unique in a store: a tenant cannot create a thread under an id another
// tenant holds (the put is refused as not found, which says the id is
// taken, never what it holds).

// DefaultTenant is the tenant every store has: the owner of every thread
// no other tenant claimed, rows written before tenants existed included.
const DefaultTenant = "default"

// ErrNoTenant: the tenant is not one the store knows.
var ErrNoTenant = errors.New("no such tenant")

// Tenancy is the backend side of tenants; every backend implements it.
// Who owns a thread is kept apart from the thread's rows: a thread with
// no owner row is DefaultTenant's, so a store written before tenants,
// and every write of the default tenant, needs none.
type Tenancy interface {
	// Tenants lists the tenants the store knows, DefaultTenant first, then
	// by name bytewise.
	Tenants(ctx context.Context) ([]string, error)
	// AddTenant makes a tenant known (a no-op when it is); the name
	// follows CheckTenant.
	AddTenant(ctx context.Context, name string) error
	// ThreadTenant is the thread's owner: DefaultTenant when no tenant
	// claimed it, for an unknown thread too.
	ThreadTenant(ctx context.Context, thread string) (string, error)
	// ClaimThread makes tenant the thread's owner, in one transaction,
	// when no tenant claimed it and the thread holds no row in any table
	// (else it is DefaultTenant's), and returns the owner after the call.
	ClaimThread(ctx context.Context, thread, tenant string) (string, error)
	// ThreadTenants is every claimed thread with its owner.
	ThreadTenants(ctx context.Context) (map[string]string, error)
}

// CheckTenant refuses a tenant name that is not 1 to 63 letters, digits,
// '_' or '-' starting with a letter: a name fit for a PostgreSQL role
// (row-level security names a tenant's role after it).
func CheckTenant(name string) error {
	ok := len(name) > 0 && len(name) < 64
	for i, r := range name {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '_' || r == '-')) {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("tenant %v: %w: a tenant is 1 to 63 letters, digits, _ or -, starting with a letter", Name(name), ErrInvalid)
	}
	return nil
}

// ForTenant returns a handle on s that reads and writes tenant's threads
// only ("" is DefaultTenant). A tenant the store does not know is
// ErrNoTenant. The handle keeps s's optional interfaces (Drafts, Watcher,
// LockHolders, Erasing); Unwrap gives s back. Closing it closes s.
func ForTenant(ctx context.Context, s Store, tenant string) (Store, error) {
	if tenant == "" {
		tenant = DefaultTenant
	}
	ten, ok := s.(Tenancy)
	if !ok {
		return nil, fmt.Errorf("tenant %v: this store keeps no tenants", Name(tenant))
	}
	if err := CheckTenant(tenant); err != nil {
		return nil, err
	}
	if tenant != DefaultTenant {
		known, err := ten.Tenants(ctx)
		if err != nil {
			return nil, fmt.Errorf("tenant %v: %w", Name(tenant), err)
		}
		if !slices.Contains(known, tenant) {
			return nil, fmt.Errorf("tenant %v: %w", Name(tenant), ErrNoTenant)
		}
	}
	t := &Tenanted{s: s, ten: ten, tenant: tenant, owners: map[string]owned{}, locked: map[string]int{}, stored: map[string]bool{}}
	if _, ok := s.(Erasing); ok {
		return erasingTenanted{t}, nil
	}
	return t, nil
}

// Tenanted is a store handle for one tenant (ForTenant). Every call first
// knows the thread's owner: a thread of another tenant is ErrNotFound for
// a call that needs the thread, and empty for a read that lists. A write
// that would create a thread claims it first.
//
// The owner is read (one indexed row) once per thread and kept for
// ownerFresh: a command makes many calls on one thread, and each read was
// work done again. A claim or a delete through the handle sets what it
// keeps; a delete and another tenant's claim of the id through another
// handle is seen once ownerFresh has passed, so a long-lived handle (the
// TUI, a worker) never reads another tenant's thread for longer.
type Tenanted struct {
	s      Store
	ten    Tenancy
	tenant string

	mu     sync.Mutex
	owners map[string]owned
	// locked counts the thread locks held through this handle (Lock);
	// stored marks a locked thread the handle has put a checkpoint into
	// since. Then no delete can free the id while the lock is held (a
	// delete takes the lock, a takeover fences this holder's writes) and
	// no tenant can claim it (it holds rows), so a put needs no fresh
	// read of the owner.
	locked map[string]int
	stored map[string]bool
}

// owned is a thread's owner as the handle last read or set it.
type owned struct {
	tenant string
	at     time.Time
}

// ownerFresh is how long a handle trusts an owner it read: longer than a
// one-shot command takes, shorter than a person takes to delete a thread
// and create another of its id.
const ownerFresh = time.Second

// Tenant is the tenant the handle reads and writes.
func (t *Tenanted) Tenant() string { return t.tenant }

// Unwrap is the store the handle reads and writes through.
func (t *Tenanted) Unwrap() Store { return t.s }

type erasingTenanted struct{ *Tenanted }

func (e erasingTenanted) Unerased(ctx context.Context) (string, error) {
	return e.s.(Erasing).Unerased(ctx)
}

// Unwrap returns the store under any tenant handle, or s itself.
func Unwrap(s Store) Store {
	for {
		u, ok := s.(interface{ Unwrap() Store })
		if !ok {
			return s
		}
		s = u.Unwrap()
	}
}

// TenantOf is the tenant a handle reads and writes: DefaultTenant for a
// store not opened through ForTenant.
func TenantOf(s Store) string {
	switch t := s.(type) {
	case *Tenanted:
		return t.tenant
	case erasingTenanted:
		return t.tenant
	}
	return DefaultTenant
}

// owner is the thread's owner (DefaultTenant for an unknown thread), as
// kept when fresh, else read and kept.
func (t *Tenanted) owner(ctx context.Context, thread string) (string, error) {
	t.mu.Lock()
	o, ok := t.owners[thread]
	t.mu.Unlock()
	if ok && time.Since(o.at) < ownerFresh {
		return o.tenant, nil
	}
	owner, err := t.ten.ThreadTenant(ctx, thread)
	if err != nil {
		return "", err
	}
	t.keep(thread, owner)
	return owner, nil
}

// keep sets the owner the handle knows ("" forgets it).
func (t *Tenanted) keep(thread, owner string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if owner == "" {
		delete(t.owners, thread)
		return
	}
	t.owners[thread] = owned{owner, time.Now()}
}

// mine reports whether the thread is the handle's tenant's (an unknown
// thread is DefaultTenant's).
func (t *Tenanted) mine(ctx context.Context, thread string) (bool, error) {
	owner, err := t.owner(ctx, thread)
	if err != nil {
		return false, err
	}
	return owner == t.tenant, nil
}

// need is mine as an error: ErrNotFound for another tenant's thread, in
// the words of a missing thread.
func (t *Tenanted) need(ctx context.Context, thread string) error {
	ok, err := t.mine(ctx, thread)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("thread %v: %w", Name(thread), ErrNotFound)
	}
	return nil
}

// claim is need for a write that may create the thread: an unclaimed
// thread becomes the tenant's, unless it already holds rows (it is then
// the default tenant's). The default tenant never claims: its threads
// need no owner row.
func (t *Tenanted) claim(ctx context.Context, thread string) error {
	if t.claimedUnderLock(thread) {
		return nil
	}
	// Read afresh, never taken from what the handle keeps: a write goes
	// into no thread its owner of a moment ago deleted and another tenant
	// claimed since.
	owner, err := t.ten.ThreadTenant(ctx, thread)
	if err != nil {
		return err
	}
	if owner == DefaultTenant && t.tenant != DefaultTenant {
		if owner, err = t.ten.ClaimThread(ctx, thread, t.tenant); err != nil {
			t.keep(thread, "")
			return err
		}
	}
	t.keep(thread, owner)
	if owner != t.tenant {
		return fmt.Errorf("thread %v: %w for tenant %s, and its id is taken: choose another thread id", Name(thread), ErrNotFound, Name(t.tenant))
	}
	return nil
}

// claimedUnderLock: the handle holds the thread's lock and has put a
// checkpoint into it since, with the owner found its tenant's. A run's
// puts after its first then skip the owner's read, one query (a round
// trip on PostgreSQL) a checkpoint. Before the first put a thread of the
// default tenant holds no owner row, and another tenant could claim the
// empty id: that put reads afresh.
func (t *Tenanted) claimedUnderLock(thread string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	o, ok := t.owners[thread]
	return t.locked[thread] > 0 && t.stored[thread] && ok && o.tenant == t.tenant
}

// put marks a put into a thread the handle holds the lock of.
func (t *Tenanted) put(thread string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.locked[thread] > 0 {
		t.stored[thread] = true
	}
}

// listed runs read when the thread is the tenant's; another tenant's
// thread reads as an unknown one: zero.
func listed[T any](t *Tenanted, ctx context.Context, thread string, read func() (T, error)) (T, error) {
	var zero T
	ok, err := t.mine(ctx, thread)
	if err != nil || !ok {
		return zero, err
	}
	return read()
}

func (t *Tenanted) PutCheckpoint(ctx context.Context, cp Checkpoint, events []Event) error {
	if err := t.claim(ctx, cp.ThreadID); err != nil {
		return err
	}
	if err := t.s.PutCheckpoint(ctx, cp, events); err != nil {
		return err
	}
	t.put(cp.ThreadID)
	return nil
}

func (t *Tenanted) PutWrites(ctx context.Context, w TaskWrites) error {
	if err := t.need(ctx, w.ThreadID); err != nil {
		return err
	}
	return t.s.PutWrites(ctx, w)
}

func (t *Tenanted) Get(ctx context.Context, thread string, id int64) (Checkpoint, error) {
	if err := t.need(ctx, thread); err != nil {
		return Checkpoint{}, err
	}
	return t.s.Get(ctx, thread, id)
}

func (t *Tenanted) Latest(ctx context.Context, thread string) (Checkpoint, error) {
	if err := t.need(ctx, thread); err != nil {
		return Checkpoint{}, err
	}
	return t.s.Latest(ctx, thread)
}

func (t *Tenanted) History(ctx context.Context, thread string, before int64, limit int) ([]Checkpoint, error) {
	return listed(t, ctx, thread, func() ([]Checkpoint, error) { return t.s.History(ctx, thread, before, limit) })
}

func (t *Tenanted) Chain(ctx context.Context, thread string, id int64) ([]Checkpoint, error) {
	if oc, ok := t.s.(ownedChainer); ok {
		chain, err := oc.ChainOwned(ctx, thread, t.tenant, id)
		if err == nil {
			// Read with its owner, the tenant: kept as a read of it.
			t.keep(thread, t.tenant)
			return chain, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		// Not found: the owner's read says whether as another's thread.
	}
	if err := t.need(ctx, thread); err != nil {
		return nil, err
	}
	return t.s.Chain(ctx, thread, id)
}

// ownedChainer is a backend that reads a chain and its thread's owner in
// one go (SQLite, PostgreSQL): a tenant's first load of a thread then
// makes no query for the owner alone (a tenth of a new process's first
// load on SQLite, a round trip on PostgreSQL).
type ownedChainer interface {
	// ChainOwned is Chain when tenant owns the thread (no owner:
	// DefaultTenant), else ErrNotFound.
	ChainOwned(ctx context.Context, thread, tenant string, id int64) ([]Checkpoint, error)
}

func (t *Tenanted) Messages(ctx context.Context, thread string, hashes []string) ([]Message, error) {
	return listed(t, ctx, thread, func() ([]Message, error) { return t.s.Messages(ctx, thread, hashes) })
}

func (t *Tenanted) MessagesAt(ctx context.Context, thread string, index int64) ([]Message, error) {
	return listed(t, ctx, thread, func() ([]Message, error) { return t.s.MessagesAt(ctx, thread, index) })
}

func (t *Tenanted) MessagesIn(ctx context.Context, thread string, from, to int64) ([]Message, error) {
	return listed(t, ctx, thread, func() ([]Message, error) { return t.s.MessagesIn(ctx, thread, from, to) })
}

func (t *Tenanted) Search(ctx context.Context, thread, query string, limit int) ([]Message, error) {
	// As for an unknown thread: a query the store refuses is refused.
	if n := len(SearchQuery(query)); n == 0 || n > MaxQueryWords {
		return t.s.Search(ctx, thread, query, limit)
	}
	return listed(t, ctx, thread, func() ([]Message, error) { return t.s.Search(ctx, thread, query, limit) })
}

func (t *Tenanted) Blobs(ctx context.Context, thread string, hashes []string) ([]Blob, error) {
	return listed(t, ctx, thread, func() ([]Blob, error) { return t.s.Blobs(ctx, thread, hashes) })
}

func (t *Tenanted) Bodies(ctx context.Context, thread string, messages, blobs []string) ([]Message, []Blob, error) {
	ok, err := t.mine(ctx, thread)
	if err != nil || !ok {
		return nil, nil, err
	}
	return t.s.Bodies(ctx, thread, messages, blobs)
}

func (t *Tenanted) Size(ctx context.Context, thread string) (int64, error) {
	return listed(t, ctx, thread, func() (int64, error) { return t.s.Size(ctx, thread) })
}

// CountSize is Size counted from the rows (SizeCounter), for the
// tenant's own thread only, as Size.
func (t *Tenanted) CountSize(ctx context.Context, thread string) (int64, error) {
	c, ok := t.s.(SizeCounter)
	if !ok {
		return 0, errors.ErrUnsupported
	}
	return listed(t, ctx, thread, func() (int64, error) { return c.CountSize(ctx, thread) })
}

func (t *Tenanted) Writes(ctx context.Context, thread string, checkpointID int64) ([]TaskWrites, error) {
	return listed(t, ctx, thread, func() ([]TaskWrites, error) { return t.s.Writes(ctx, thread, checkpointID) })
}

func (t *Tenanted) Events(ctx context.Context, thread string, checkpointID int64) ([]Event, error) {
	return listed(t, ctx, thread, func() ([]Event, error) { return t.s.Events(ctx, thread, checkpointID) })
}

// Threads lists the tenant's threads: every thread for the default
// tenant but those another tenant claimed.
func (t *Tenanted) Threads(ctx context.Context) ([]Thread, error) {
	owners, err := t.ten.ThreadTenants(ctx)
	if err != nil {
		return nil, err
	}
	return t.threadsOf(ctx, owners)
}

// threadsOf is Threads with the store's thread owners already read.
func (t *Tenanted) threadsOf(ctx context.Context, owners map[string]string) ([]Thread, error) {
	all, err := t.s.Threads(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(th Thread) bool {
		owner, ok := owners[th.ID]
		if !ok {
			owner = DefaultTenant
		}
		return owner != t.tenant
	}), nil
}

// RecentThreads pages the tenant's threads. The default tenant of a
// store no other tenant claimed a thread of has them all: the store's
// page. Else another tenant's threads must be left out of the page and
// its count, which the store's page cannot say, so this reads the
// tenant's whole list (Threads).
func (t *Tenanted) RecentThreads(ctx context.Context, before ThreadCursor, limit int) ([]Thread, int, error) {
	owners, err := t.ten.ThreadTenants(ctx)
	if err != nil {
		return nil, 0, err
	}
	if t.tenant == DefaultTenant && !slices.ContainsFunc(slices.Collect(maps.Values(owners)), func(o string) bool { return o != DefaultTenant }) {
		return t.s.RecentThreads(ctx, before, limit)
	}
	all, err := t.threadsOf(ctx, owners)
	if err != nil {
		return nil, 0, err
	}
	page, rest, err := RecentPage(all, before, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("threads updated before thread %v: %w", Name(before.ID), err)
	}
	return page, rest, nil
}

func (t *Tenanted) Fence(ctx context.Context, thread string) (int64, error) {
	if err := t.claim(ctx, thread); err != nil {
		return 0, err
	}
	return t.s.Fence(ctx, thread)
}

func (t *Tenanted) Epoch(ctx context.Context, thread string) (int64, error) {
	return listed(t, ctx, thread, func() (int64, error) { return t.s.Epoch(ctx, thread) })
}

func (t *Tenanted) DeleteThread(ctx context.Context, thread string) error {
	if err := t.need(ctx, thread); err != nil {
		return err
	}
	// Deleted, the id is free for any tenant: read its owner again.
	defer t.keep(thread, "")
	return t.s.DeleteThread(ctx, thread)
}

func (t *Tenanted) Prune(ctx context.Context, thread string, ids []int64, rebase []Rebase) (PruneResult, error) {
	if err := t.need(ctx, thread); err != nil {
		return PruneResult{}, err
	}
	return t.s.Prune(ctx, thread, ids, rebase)
}

// Lock comes before a new thread's first put: it claims the thread.
// While the lock is held, the handle's puts after the first trust that
// claim (claimedUnderLock).
func (t *Tenanted) Lock(ctx context.Context, thread string) (func() error, error) {
	if err := t.claim(ctx, thread); err != nil {
		return nil, err
	}
	release, err := t.s.Lock(ctx, thread)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.locked[thread]++
	t.mu.Unlock()
	var once sync.Once
	return func() error {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.locked[thread]--; t.locked[thread] <= 0 {
				delete(t.locked, thread)
				delete(t.stored, thread)
			}
		})
		return release()
	}, nil
}

func (t *Tenanted) Close() error { return t.s.Close() }

// CreateDraft claims the thread as a put does: a draft needs no
// checkpoint.
func (t *Tenanted) CreateDraft(ctx context.Context, d Draft) (Draft, bool, error) {
	ds, ok := t.s.(Drafts)
	if !ok {
		return Draft{}, false, errors.ErrUnsupported
	}
	if err := t.claim(ctx, d.ThreadID); err != nil {
		return Draft{}, false, err
	}
	return ds.CreateDraft(ctx, d)
}

func (t *Tenanted) Draft(ctx context.Context, thread, operationID string) (Draft, error) {
	ds, ok := t.s.(Drafts)
	if !ok {
		return Draft{}, errors.ErrUnsupported
	}
	if err := t.need(ctx, thread); err != nil {
		return Draft{}, err
	}
	return ds.Draft(ctx, thread, operationID)
}

func (t *Tenanted) ListDrafts(ctx context.Context, thread string) ([]Draft, error) {
	ds, ok := t.s.(Drafts)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return listed(t, ctx, thread, func() ([]Draft, error) { return ds.ListDrafts(ctx, thread) })
}

// Watch on another tenant's thread waits as on an unknown thread that
// never comes: its channel closes with ctx and wakes for nothing.
func (t *Tenanted) Watch(ctx context.Context, thread string) (<-chan struct{}, error) {
	w, ok := t.s.(Watcher)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	mine, err := t.mine(ctx, thread)
	if err != nil {
		return nil, err
	}
	if !mine {
		ch := make(chan struct{})
		go func() { <-ctx.Done(); close(ch) }()
		return ch, nil
	}
	return w.Watch(ctx, thread)
}

func (t *Tenanted) LockHolder(ctx context.Context, thread string) (string, error) {
	h, ok := t.s.(LockHolders)
	if !ok {
		return "", errors.ErrUnsupported
	}
	return listed(t, ctx, thread, func() (string, error) { return h.LockHolder(ctx, thread) })
}

// Reseal rewrites the tenant's own thread only: another tenant's thread
// is not found, as an unknown one is.
func (t *Tenanted) Reseal(ctx context.Context, thread string, fn func(kind DocKind, hash string, doc []byte) ([]byte, error)) (int, error) {
	rs, ok := t.s.(Resealer)
	if !ok {
		return 0, errors.ErrUnsupported
	}
	if err := t.need(ctx, thread); err != nil {
		return 0, err
	}
	return rs.Reseal(ctx, thread, fn)
}

// SetTxHook reaches the store's mid-transaction hook (tests' kill points).
func (t *Tenanted) SetTxHook(hook func(stage string)) {
	if h, ok := t.s.(interface{ SetTxHook(func(string)) }); ok {
		h.SetTxHook(hook)
	}
}

var (
	_ Drafts      = (*Tenanted)(nil)
	_ Watcher     = (*Tenanted)(nil)
	_ LockHolders = (*Tenanted)(nil)
	_ Resealer    = (*Tenanted)(nil)
	_ Erasing     = erasingTenanted{}
)
