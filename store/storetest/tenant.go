package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"rewind/store"
)

// Tenants: a handle of one tenant (store.ForTenant) finds nothing of
// another tenant's thread, by any call, and cannot change it; the
// default tenant keeps the threads written without tenants.

// tenantThread puts thread th through s with everything a thread holds:
// two checkpoints, an event, a message, a blob, task writes, a draft
// (when the backend keeps drafts) and a writer epoch.
func tenantThread(t *testing.T, s store.Store, th string, raw store.Store) {
	t.Helper()
	msg := []byte(`{"role":"user","text":"zanzibar secret"}`)
	blob := []byte(`{"big":"value"}`)
	cp := checkpoint(th, 1, 0)
	cp.Messages = []store.Message{{Hash: store.ContentHash(msg), Index: 0, Body: msg}}
	cp.Blobs = []store.Blob{{Hash: store.ContentHash(blob), Body: blob}}
	cp.BlobRefs = []string{store.ContentHash(blob)}
	put(t, s, cp, event("node", `{"n":1}`))
	put(t, s, checkpoint(th, 2, 1))
	putWrites(t, s, writes(th, 2, "task"))
	if _, err := s.Fence(t.Context(), th); err != nil {
		t.Fatalf("Fence(%s): %v", clip(th), err)
	}
	if ds, ok := s.(store.Drafts); ok && has[store.Drafts](raw) {
		if _, _, err := ds.CreateDraft(t.Context(), store.Draft{ThreadID: th, OperationID: "op", Body: []byte(`{"to":"x"}`)}); err != nil {
			t.Fatalf("CreateDraft(%s): %v", clip(th), err)
		}
	}
}

// has says whether the backend raw is a T: a tenant handle is a
// store.Drafts, Watcher, LockHolders and Resealer whatever it wraps.
func has[T any](raw store.Store) bool {
	_, ok := raw.(T)
	return ok
}

// blind checks that s sees nothing of thread th: every call is what an
// unknown thread gives, and no write reaches it.
func blind(t *testing.T, s store.Store, th string, raw store.Store) {
	t.Helper()
	ctx := t.Context()
	hashes := []string{store.ContentHash([]byte(`{"role":"user","text":"zanzibar secret"}`))}
	blobs := []string{store.ContentHash([]byte(`{"big":"value"}`))}
	notFound := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another tenant's %s(%s) = %v, want ErrNotFound", what, clip(th), err)
		}
	}
	empty := func(what string, n int, err error) {
		t.Helper()
		if err != nil || n != 0 {
			t.Errorf("another tenant's %s(%s) gave %d rows, err %v; want none, as for an unknown thread", what, clip(th), n, err)
		}
	}
	_, err := s.Get(ctx, th, 1)
	notFound("Get", err)
	_, err = s.Latest(ctx, th)
	notFound("Latest", err)
	_, err = s.Chain(ctx, th, 2)
	notFound("Chain", err)
	h, err := s.History(ctx, th, 0, 0)
	empty("History", len(h), err)
	m, err := s.Messages(ctx, th, hashes)
	empty("Messages", len(m), err)
	m, err = s.MessagesAt(ctx, th, 0)
	empty("MessagesAt", len(m), err)
	m, err = s.MessagesIn(ctx, th, 0, 10)
	empty("MessagesIn", len(m), err)
	m, err = s.Search(ctx, th, "zanzibar", 0)
	empty("Search", len(m), err)
	b, err := s.Blobs(ctx, th, blobs)
	empty("Blobs", len(b), err)
	m, b, err = s.Bodies(ctx, th, hashes, blobs)
	empty("Bodies", len(m)+len(b), err)
	w, err := s.Writes(ctx, th, 0)
	empty("Writes", len(w), err)
	e, err := s.Events(ctx, th, 0)
	empty("Events", len(e), err)
	n, err := s.Size(ctx, th)
	empty("Size", int(n), err)
	epoch, err := s.Epoch(ctx, th)
	empty("Epoch", int(epoch), err)
	threads, err := s.Threads(ctx)
	if err != nil || slices.ContainsFunc(threads, func(x store.Thread) bool { return x.ID == th }) {
		t.Errorf("another tenant's Threads lists %s (err %v)", clip(th), err)
	}
	if ds, ok := s.(store.Drafts); ok && has[store.Drafts](raw) {
		_, err = ds.Draft(ctx, th, "op")
		notFound("Draft", err)
		d, err := ds.ListDrafts(ctx, th)
		empty("ListDrafts", len(d), err)
		_, _, err = ds.CreateDraft(ctx, store.Draft{ThreadID: th, OperationID: "op2", Body: []byte(`{}`)})
		notFound("CreateDraft", err)
	}
	if lh, ok := s.(store.LockHolders); ok && has[store.LockHolders](raw) {
		holder, err := lh.LockHolder(ctx, th)
		if err != nil || holder != "" {
			t.Errorf("another tenant's LockHolder(%s) = %q, %v; want none", clip(th), holder, err)
		}
	}
	// Writes: refused as not found, and none reaches the thread.
	notFound("PutCheckpoint", s.PutCheckpoint(ctx, checkpoint(th, 3, 2), nil))
	notFound("PutCheckpoint of a root", s.PutCheckpoint(ctx, checkpoint(th, 9, 0), nil))
	notFound("PutWrites", s.PutWrites(ctx, writes(th, 2, "other")))
	_, err = s.Fence(ctx, th)
	notFound("Fence", err)
	_, err = s.Prune(ctx, th, []int64{1}, nil)
	notFound("Prune", err)
	_, err = s.Lock(ctx, th)
	notFound("Lock", err)
	notFound("DeleteThread", s.DeleteThread(ctx, th))
	if rs, ok := s.(store.Resealer); ok && has[store.Resealer](raw) {
		called := 0
		_, err := rs.Reseal(ctx, th, func(_ store.DocKind, _ string, doc []byte) ([]byte, error) { called++; return doc, nil })
		notFound("Reseal", err)
		if called != 0 {
			t.Errorf("another tenant's Reseal(%s) was handed %d documents; want none", clip(th), called)
		}
	}
	if wa, ok := s.(store.Watcher); ok && has[store.Watcher](raw) {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if _, err := wa.Watch(wctx, th); err != nil {
			t.Errorf("another tenant's Watch(%s) = %v, want a watch as on an unknown thread", clip(th), err)
		}
	}
}

// whole checks that s, the owner's handle, still reads thread th whole.
func whole(t *testing.T, s store.Store, th string, raw store.Store) {
	t.Helper()
	ctx := t.Context()
	got, err := s.Latest(ctx, th)
	if err != nil || got.ID != 2 {
		t.Fatalf("the owner's Latest(%s) = %d, %v; want 2 (another tenant's call changed it?)", clip(th), got.ID, err)
	}
	wantTasks(t, s, th, 2, "task")
	m, err := s.Search(ctx, th, "zanzibar", 0)
	if err != nil || len(m) != 1 {
		t.Errorf("the owner's Search(%s) = %d messages, %v; want 1", clip(th), len(m), err)
	}
	if ds, ok := s.(store.Drafts); ok && has[store.Drafts](raw) {
		d, err := ds.ListDrafts(ctx, th)
		if err != nil || len(d) != 1 {
			t.Errorf("the owner's ListDrafts(%s) = %d, %v; want its 1 draft", clip(th), len(d), err)
		}
	}
}

func testTenants(t *testing.T, s store.Store) {
	ctx := t.Context()
	ten, ok := s.(store.Tenancy)
	if !ok {
		t.Fatal("the store is no store.Tenancy")
	}
	// Written without tenants: the default tenant's.
	tenantThread(t, s, "t-old", s)
	if _, err := store.ForTenant(ctx, s, "acme"); !errors.Is(err, store.ErrNoTenant) {
		t.Fatalf("ForTenant of a tenant never added = %v, want ErrNoTenant", err)
	}
	for _, name := range []string{"acme", "globex", "acme"} {
		if err := ten.AddTenant(ctx, name); err != nil {
			t.Fatalf("AddTenant(%s): %v", name, err)
		}
	}
	if err := ten.AddTenant(ctx, "no spaces"); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("AddTenant(\"no spaces\") = %v, want ErrInvalid", err)
	}
	if got, err := ten.Tenants(ctx); err != nil || !slices.Equal(got, []string{store.DefaultTenant, "acme", "globex"}) {
		t.Errorf("Tenants = %q, %v; want [default acme globex]", got, err)
	}
	def, err := store.ForTenant(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	acme, err := store.ForTenant(ctx, s, "acme")
	if err != nil {
		t.Fatal(err)
	}
	globex, err := store.ForTenant(ctx, s, "globex")
	if err != nil {
		t.Fatal(err)
	}
	whole(t, def, "t-old", s)
	blind(t, acme, "t-old", s)

	tenantThread(t, acme, "t-acme", s)
	blind(t, globex, "t-acme", s)
	blind(t, def, "t-acme", s)
	whole(t, acme, "t-acme", s)
	whole(t, def, "t-old", s)
	for _, c := range []struct {
		s    store.Store
		want []string
	}{{def, []string{"t-old"}}, {acme, []string{"t-acme"}}, {globex, nil}} {
		threads, err := c.s.Threads(ctx)
		var got []string
		for _, th := range threads {
			got = append(got, th.ID)
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("tenant %s's Threads = %q, %v; want %q", store.TenantOf(c.s), got, err, c.want)
		}
	}
	if owner, err := ten.ThreadTenant(ctx, "t-acme"); err != nil || owner != "acme" {
		t.Errorf("ThreadTenant(t-acme) = %q, %v; want acme", owner, err)
	}
	// Deleted, the id is free again, for any tenant.
	if err := acme.DeleteThread(ctx, "t-acme"); err != nil {
		t.Fatalf("the owner's DeleteThread: %v", err)
	}
	if owner, err := ten.ThreadTenant(ctx, "t-acme"); err != nil || owner != store.DefaultTenant {
		t.Errorf("ThreadTenant of a deleted thread = %q, %v; want the default tenant", owner, err)
	}
	put(t, globex, checkpoint("t-acme", 1, 0))
	blind(t, acme, "t-acme", s)

	// A handle keeps the owners it read; its own claim sets what it keeps:
	// an id it read as unknown is its own once it wrote it.
	if _, err := acme.Latest(ctx, "t-new"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Latest of an unknown thread = %v, want ErrNotFound", err)
	}
	tenantThread(t, acme, "t-new", s)
	whole(t, acme, "t-new", s)
	blind(t, globex, "t-new", s)
	tenantOwnerReads(t, s)
	tenantPutsUnderLock(t, s)
}

// countTenancy counts the owner reads a tenant handle makes.
type countTenancy struct {
	store.Store
	store.Tenancy
	reads int
}

func (c *countTenancy) ThreadTenant(ctx context.Context, thread string) (string, error) {
	c.reads++
	return c.Tenancy.ThreadTenant(ctx, thread)
}

// tenantOwnerReads: a handle reads a thread's owner once for the many
// calls a command makes on it, not once a call.
func tenantOwnerReads(t *testing.T, s store.Store) {
	ctx := t.Context()
	c := &countTenancy{Store: s, Tenancy: s.(store.Tenancy)}
	acme, err := store.ForTenant(ctx, c, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := acme.Latest(ctx, "t-new"); err != nil {
			t.Fatalf("the owner's Latest(t-new): %v", err)
		}
		if _, err := acme.History(ctx, "t-new", 0, 10); err != nil {
			t.Fatalf("the owner's History(t-new): %v", err)
		}
	}
	if c.reads != 1 {
		t.Errorf("six calls on one thread read its owner %d times, want once", c.reads)
	}
}

// tenantPutsUnderLock: a run holds the thread's lock, taken after a claim,
// and its puts after the first read no owner again (one query, a round
// trip on PostgreSQL, a checkpoint); without the lock a put reads it
// afresh, so a write never lands in an id another tenant claimed after a
// delete.
func tenantPutsUnderLock(t *testing.T, s store.Store) {
	ctx := t.Context()
	c := &countTenancy{Store: s, Tenancy: s.(store.Tenancy)}
	acme, err := store.ForTenant(ctx, c, "acme")
	if err != nil {
		t.Fatal(err)
	}
	release, err := acme.Lock(ctx, "t-run")
	if err != nil {
		t.Fatalf("the owner's Lock(t-run): %v", err)
	}
	locked := c.reads
	for id := int64(1); id <= 4; id++ {
		put(t, acme, checkpoint("t-run", id, id-1))
	}
	// The first put reads it: before a row exists, an id the default
	// tenant locked holds no owner row another tenant's claim would see.
	if c.reads != locked+1 {
		t.Errorf("four puts under the lock read the owner %d times more, want once (the first)", c.reads-locked)
	}
	locked = c.reads
	if err := release(); err != nil {
		t.Fatalf("release t-run: %v", err)
	}
	put(t, acme, checkpoint("t-run", 5, 4))
	if c.reads != locked+1 {
		t.Errorf("a put after the lock's release read the owner %d times more, want once", c.reads-locked)
	}
	// Deleted by another handle of its owner and claimed by another
	// tenant: a put without the lock is refused, as for any id taken.
	other, err := store.ForTenant(ctx, s, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if err := other.DeleteThread(ctx, "t-run"); err != nil {
		t.Fatalf("DeleteThread(t-run): %v", err)
	}
	globex, err := store.ForTenant(ctx, s, "globex")
	if err != nil {
		t.Fatal(err)
	}
	put(t, globex, checkpoint("t-run", 1, 0))
	if err := acme.PutCheckpoint(ctx, checkpoint("t-run", 6, 5), nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a put into an id another tenant claimed after a delete = %v, want ErrNotFound", err)
	}
	// The default tenant locks a new id (no owner row: it never claims)
	// and another tenant claims the empty id before the first put: that
	// put is refused, the lock notwithstanding.
	def, err := store.ForTenant(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	release, err = def.Lock(ctx, "t-race")
	if err != nil {
		t.Fatalf("Lock(t-race): %v", err)
	}
	defer release()
	put(t, globex, checkpoint("t-race", 1, 0))
	if err := def.PutCheckpoint(ctx, checkpoint("t-race", 2, 1), nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the locker's first put into an id another tenant claimed meanwhile = %v, want ErrNotFound", err)
	}
}

// A tenant's Chain in a store opened before another handle (another
// process) added that tenant and claimed a thread for it: the first
// handle's default tenant finds no checkpoint of the thread, in the range
// read (checkpoint 2 of u, a base) and in the parents' walk (3, whose
// parent comes before the range); the tenant's handle on the first store
// finds both chains, and no thread of the default tenant. A store that
// reads the owner in the chain's own statement (ChainOwned) must read it
// as it is now, not as the handle found it when it opened.
func testTenantChainOfAClaimMadeElsewhere(t *testing.T, b Backend) {
	ctx := t.Context()
	mine, addr := b.Fresh(t)
	def, err := store.ForTenant(ctx, mine, "")
	if err != nil {
		t.Fatal(err)
	}
	put(t, def, checkpoint("t", 1, 0))
	if chain, err := def.Chain(ctx, "t", 1); err != nil || len(chain) != 1 {
		t.Fatalf("the default tenant's Chain of its thread = %d rows, %v; want 1", len(chain), err)
	}

	other := reopen(t, b, addr)
	ten, ok := other.(store.Tenancy)
	if !ok {
		t.Fatal("the store is no store.Tenancy")
	}
	if err := ten.AddTenant(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	acme, err := store.ForTenant(ctx, other, "acme")
	if err != nil {
		t.Fatal(err)
	}
	u := func(id, parent int64, base bool) store.Checkpoint {
		c := checkpoint("u", id, parent)
		c.Base = base
		return c
	}
	for _, c := range []store.Checkpoint{u(1, 0, true), u(2, 1, true), u(3, 1, false)} {
		put(t, acme, c)
	}
	acmeHere, err := store.ForTenant(ctx, mine, "acme")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int64][]int64{2: {2}, 3: {3, 1}} {
		if _, err := def.Chain(ctx, "u", id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the default tenant's Chain of checkpoint %d of acme's thread = %v; want ErrNotFound", id, err)
		}
		chain, err := acmeHere.Chain(ctx, "u", id)
		var ids []int64
		for _, c := range chain {
			ids = append(ids, c.ID)
		}
		if err != nil || !slices.Equal(ids, want) {
			t.Errorf("acme's Chain of checkpoint %d of its thread = %v, %v; want %v", id, ids, err, want)
		}
	}
	if _, err := acmeHere.Chain(ctx, "t", 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("acme's Chain of the default tenant's thread = %v; want ErrNotFound", err)
	}
}
