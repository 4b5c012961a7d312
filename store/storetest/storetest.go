// Package storetest is the one conformance suite every store backend passes.
// Run asserts the behaviour the engine relies on, through the Store interface
// only; Bench measures the hot paths so backends can be compared.
//
// One file per clause of the contract in store/store.go: input.go (Input),
// atomicity.go (Atomicity), put.go (PutCheckpoint, PutWrites, the writer's
// CreatedAt), read.go (Get, Latest, History, Chain), content.go (Messages,
// MessagesAt, MessagesIn, Blobs, Bodies, Size, sealed bodies), size.go (Size's
// running total, store.SizeCounter), search.go
// (Search), reseal.go (store.Resealer), events.go (Events,
// Threads), delete.go (DeleteThread, store.Erasing), prune.go (Prune), lock.go (Lock),
// watch.go (store.Watcher, store.LockHolders), fencing.go (Fencing,
// Fence), drafts.go (store.Drafts), txhook.go (the mid-transaction hook), tenant.go (store.Tenancy, store.ForTenant)
// and process.go (what only another process can show: SIGKILL,
// SIGSTOP, a reader holding deleted text). A backend declares the capabilities it has (Backend.Caps); a
// clause whose capability it lacks is skipped, saying so.
package storetest

import (
	"context"
	"flag"
	"os"
	"slices"
	"testing"

	"rewind/store"
)

// Capability is a part of the contract beyond the core every backend keeps
// (put, read, delete, prune, Lock within a process). Fence is in the Store
// interface, so core clauses call it too (an epoch survives Prune, long ids
// in its errors); Fencing gates the clauses about fenced writes.
type Capability string

const (
	// Drafts: the store is a store.Drafts (the side-effect table).
	Drafts Capability = "drafts"
	// Fencing: Fence hands out epochs and writes carrying an old one are
	// refused (ErrFenced).
	Fencing Capability = "fencing"
	// TxHook: SetTxHook(func(stage string)) is called inside PutCheckpoint's
	// transaction (the mid-transaction kill point).
	TxHook Capability = "tx-hook"
	// Processes: other processes reach the same store (Backend.Fresh and
	// Reopen), so a writer can be SIGKILLed or SIGSTOPped for real:
	// process.go. Memory has none.
	Processes Capability = "processes"
	// Watch: the store is a store.Watcher (a waiter wakes when a thread
	// gets a new checkpoint or is deleted, from any handle or process) and a
	// store.LockHolders (it names a lock's holder): watch.go.
	Watch Capability = "watch"
	// Erasure: the store is a store.Erasing (it says what keeps a deleted
	// thread's text in its files, and erases it once that ends): delete.go,
	// and with Processes a reader in another process (give HoldRead and
	// Leaks): process.go.
	Erasure Capability = "erasure"
)

// Capabilities are every capability, for a backend that has them all.
var Capabilities = []Capability{Drafts, Fencing, TxHook, Processes, Watch, Erasure}

// Backend is a store under test.
type Backend struct {
	// Open returns a fresh, empty store and closes it with t.Cleanup.
	Open func(t *testing.T) store.Store
	// Caps are the capabilities it has.
	Caps []Capability
	// With Processes: Fresh returns a fresh, empty store (closed with
	// t.Cleanup) and the address another process opens it by (a path, a
	// URL); Reopen opens the store at an address (in the child process, and
	// again in the parent).
	Fresh  func(t *testing.T) (store.Store, string)
	Reopen func(ctx context.Context, addr string) (store.Store, error)
	// InsideTx, optional, runs in the child at the mid-transaction hook
	// with the child's store: what only the backend can check about its
	// open transaction (an error fails the test).
	InsideTx func(s store.Store) error
	// AfterKills, optional, checks the store's files or server after the
	// writers killed mid-write (say, SQLite's integrity_check).
	AfterKills func(t *testing.T, addr string)
	// With Erasure and Processes: HoldRead, in the child, begins a read of
	// the store at addr as another program would (not through the store)
	// and holds it until end, which ends the read but keeps the program's
	// connection open; Leaks lists the store's files at addr that hold
	// text ("rewind.db-wal (3 times)").
	HoldRead func(ctx context.Context, addr string) (end func() error, err error)
	Leaks    func(t *testing.T, addr, text string) []string
	// Child, optional, is the path of a binary whose main calls Child
	// with the Reopen, InsideTx and HoldRead above (then the test's own
	// Backend needs no HoldRead): the process tests' children run it, not
	// this test binary again, so they are not raced (SQLite's process
	// tests took twice the CPU with raced children).
	Child string
}

// Has says whether b declares capability c.
func (b Backend) Has(c Capability) bool { return slices.Contains(b.Caps, c) }

// clause is one test of the suite and the capabilities it needs (none for
// the core).
type clause struct {
	name  string
	needs []Capability
	run   func(t *testing.T, s store.Store)
}

var clauses = []clause{
	// Input.
	{"SameValueNotSameBytes", nil, testSameValue},
	{"InvalidCheckpoint", nil, testInvalidCheckpoint},
	{"InvalidWrites", nil, testInvalidWrites},
	{"HostilePayloads", nil, testHostilePayloads},
	{"HostileThreadIDs", nil, testHostileThreadIDs},
	{"LongIDsClippedInErrors", nil, testLongIDsInErrors},
	// Atomicity.
	{"RejectedPutWritesNothing", nil, testRejectedPut},
	{"NoAliasing", nil, testNoAliasing},
	{"CancelledContext", nil, testCancelled},
	// PutCheckpoint, PutWrites.
	{"RoundTrip", nil, testRoundTrip},
	{"SameContentIsNoOp", nil, testSameContent},
	{"Conflict", nil, testConflict},
	{"Stale", nil, testStale},
	{"ConcurrentPuts", nil, testConcurrent},
	{"Writes", nil, testWrites},
	{"PutSettlesWrites", nil, testSettles},
	{"WritersCreatedAt", nil, testWritersCreatedAt},
	// Get, Latest, History, Chain.
	{"Latest", nil, testLatest},
	{"NotFound", nil, testNotFound},
	{"History", nil, testHistory},
	{"Forks", nil, testForks},
	{"HistoryReadsMetadataOnly", nil, testHistoryMetaOnly},
	{"ChainStopsAtBase", nil, testChain},
	{"ChainAcrossBranches", nil, testChainAcrossBranches},
	{"HeadSnapshot", nil, testHeadSnapshot},
	// Messages, Blobs, Size.
	{"MessagesStoredOnce", nil, testMessagesOnce},
	{"BlobsStoredOnce", nil, testBlobsOnce},
	{"BodiesAreMessagesAndBlobs", nil, testBodies},
	{"BodiesOfAStretchInAnyOrder", nil, testBodiesOfAStretch},
	{"MessagesInRange", nil, testMessagesIn},
	{"SealedBodies", nil, testSealedBodies},
	{"Reseal", nil, testReseal},
	{"Size", nil, testSize},
	{"SizeKept", nil, testSizeKept},
	// Search.
	{"Search", nil, testSearch},
	{"SearchAfterPruneAndDelete", nil, testSearchAfterPruneAndDelete},
	// Events, Threads.
	{"Events", nil, testEvents},
	{"Threads", nil, testThreads},
	{"ThreadCounts", nil, testThreadCounts},
	{"RecentThreads", nil, testRecentThreads},
	{"RecentThreadsCursor", nil, testRecentThreadsCursor},
	// DeleteThread.
	{"DeleteThread", nil, testDeleteThread},
	{"DeleteForgetsBodies", nil, testDeleteForgetsBodies},
	{"DeleteErases", []Capability{Erasure}, testDeleteErases},
	// Lock.
	{"Lock", nil, testLock},
	// Drafts.
	{"DraftsIdempotent", []Capability{Drafts}, testDraftsIdempotent},
	{"DraftsConcurrent", []Capability{Drafts}, testDraftsConcurrent},
	{"DraftsList", []Capability{Drafts}, testDraftsList},
	{"DraftsDeleted", []Capability{Drafts}, testDraftsDeleted},
	{"DraftsHostile", []Capability{Drafts}, testDraftsHostile},
	{"DraftsInvalid", []Capability{Drafts}, testDraftsInvalid},
	// Fencing.
	{"FenceEpochs", []Capability{Fencing}, testFenceEpochs},
	{"EpochReads", []Capability{Fencing}, testEpochReads},
	{"FencedWrites", []Capability{Fencing}, testFencedWrites},
	{"FencedBetweenWrites", []Capability{Fencing}, testFencedBetweenWrites},
	{"FencedDrafts", []Capability{Fencing, Drafts}, testFencedDrafts},
	{"FencedBetweenDrafts", []Capability{Fencing, Drafts}, testFencedBetweenDrafts},
	{"FencedAcrossDelete", []Capability{Fencing}, testFencedAcrossDelete},
	{"DeleteRacesFencedWriter", []Capability{Fencing}, testDeleteRacesWriter},
	// The transaction hook.
	{"TxHook", []Capability{TxHook, Fencing}, testTxHook},
	// Watch.
	{"Watch", []Capability{Watch}, testWatch},
	{"WatchRolledBack", []Capability{Watch, TxHook}, testWatchRolledBack},
	{"WatchDelete", []Capability{Watch}, testWatchDelete},
	{"LockHolder", []Capability{Watch}, testLockHolderHere},
	// Prune.
	{"PruneDeletesEveryRow", nil, testPruneDeletes},
	{"PruneReroots", nil, testPruneReroots},
	{"PruneRerootsFork", nil, testPruneRerootsFork},
	{"PruneIsAtomic", nil, testPruneAtomic},
	{"PruneKeepsTheHead", nil, testPruneHead},
	{"PrunedIDsStayStale", nil, testPrunedIDsStale},
	{"PruneRerootedSameContent", nil, testPruneSameContent},
	{"PruneRacesWriters", nil, testPruneRaces},
	{"PruneRebasesAndFreesBlobs", nil, testPruneRebase},
	// Tenants.
	{"TenantIsolation", nil, testTenants},
}

// Run runs the suite on b: every clause its capabilities allow, then, with
// Processes, the process tests (process.go). In a child process of those
// it plays the child's part instead. The clauses run in parallel (each on
// a store of its own): on PostgreSQL most of a clause is waiting for the
// server, which then overlaps. Under -test.failfast (the mutants of
// storetest_test.go) they run one at a time, so that the first failure
// ends the run.
func Run(t *testing.T, b Backend) {
	if os.Getenv(childEnv) != "" {
		runChild(b)
		return
	}
	parallel := !failFast()
	for _, c := range clauses {
		t.Run(c.name, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			for _, need := range c.needs {
				if !b.Has(need) {
					t.Skipf("the backend does not declare %s", need)
				}
			}
			c.run(t, b.Open(t))
		})
	}
	runProcesses(t, b)
}

// failFast says whether the test binary runs with -test.failfast.
func failFast() bool {
	f := flag.Lookup("test.failfast")
	return f != nil && f.Value.String() == "true"
}
