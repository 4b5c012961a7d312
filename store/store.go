// Package store is where checkpoint chains live: checkpoints, the pending
// writes of half-finished supersteps, and the events written with them.
//
// The engine sees only the Store interface; the backends (memory, sqlite,
// postgres) live in sub-packages and all pass the one conformance suite in
// store/storetest. A store never interprets a checkpoint's state document:
// decoding and schema migration are the engine's job.
package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Checkpoint is one stored instant of a thread.
type Checkpoint struct {
	ThreadID string
	// ID is monotonic within the thread and starts at 1. A fork is a new,
	// larger ID whose parent is an older checkpoint.
	ID int64
	// ParentID is 0 for the root of a thread, and for a checkpoint whose
	// parent Prune deleted (see RerootedFrom).
	ParentID int64
	// Meta is the engine's small JSON document about the checkpoint (step,
	// source, what ran, what is next, sizes): all that a listing needs.
	// History returns it without State. Optional: rows written before it
	// existed have none.
	Meta []byte
	// State is the engine's JSON document. Stores keep it verbatim
	// (PostgreSQL may normalise it as jsonb; it must decode to the same
	// value). Unless Base is set it holds only what changed since the
	// parent, and Chain returns what is needed to read it.
	State []byte
	// Base says State reads on its own, without its ancestors; Chain stops
	// at a base. Rows written before the field existed are bases.
	Base bool
	// Rebased is a self-contained document that Prune stored for a
	// checkpoint that was not a base when it deleted its parent; Chain
	// stops there too. State stays as it was put. Read-only: Get, Latest
	// and Chain fill it; PutCheckpoint ignores it.
	Rebased []byte
	// Head is the thread's head snapshot: the engine's document that holds
	// this checkpoint whole, kept for the newest checkpoint a put gave one
	// (a cache of what its chain reads, so a new process reads the newest
	// state in one row). A put that stores a new row with Head stores it
	// in its transaction and drops the thread's older snapshot; a put
	// without it, or one that is a no-op, leaves the snapshot as it is.
	// Get, Latest and Chain fill it on the row it is for, and Chain stops
	// there as at a base; History never does. DeleteThread drops it, Prune
	// too (its document may hold what a prune frees), and Size counts it.
	// It is not content: puts that differ only in Head are the same put.
	Head []byte
	// BlobRefs are the hashes of the blobs State refers to; Prune frees a
	// blob once no remaining checkpoint refers to it.
	BlobRefs []string
	// Messages and Blobs are stored with the checkpoint, in its
	// transaction, once per thread: a hash the thread already holds is left
	// as it is. Write-only: read them with Store.Messages and Store.Blobs.
	Messages []Message
	Blobs    []Blob
	// Settles is the parent when this checkpoint completes the parent's
	// superstep: the parent's stored task writes are folded into State, so
	// the put deletes them in its transaction. 0: none; anything but 0 or
	// ParentID is ErrInvalid. Write-only.
	Settles int64
	// CreatedAt is when the row was first written: the writer's time when
	// PutCheckpoint is given one (not zero), else the store's clock. It is
	// kept to the microsecond (a store may drop finer precision, so a
	// writer that compares it with what it gave truncates it first), and
	// the checkpoint's events and new messages take the same time. The
	// engine stamps every row it writes: a reader that cached a row knows
	// it by its time too, so a thread deleted and written again with the
	// same documents is not taken for the old one.
	CreatedAt time.Time
	// Epoch is the writer's fencing token from Store.Fence, checked when
	// the checkpoint is written and not stored (reads give 0). 0 writes
	// unfenced.
	Epoch int64
	// RerootedFrom is the parent this checkpoint had before Prune deleted
	// that parent (ParentID is then 0): the chain visibly starts here
	// because older checkpoints were pruned, not because this one began
	// the thread. 0 otherwise. Read-only: Get, Latest and History fill it; PutCheckpoint
	// ignores it.
	RerootedFrom int64
}

// Message is one message of a thread's conversation, stored once, apart
// from the checkpoints that hold it: the raw transcript a summary never
// overwrites. It survives compaction and Prune; only DeleteThread removes
// it.
type Message struct {
	ThreadID string
	// Hash is ContentHash(Body): two branches that wrote the same message
	// share one row, and different messages with one index do not collide.
	Hash string
	// Index is the message's position in the conversation.
	Index int64
	// Body is a JSON object, kept byte for byte.
	Body []byte
	// CheckpointID is the checkpoint whose put stored it first.
	// Read-only.
	CheckpointID int64
	CreatedAt    time.Time
}

// Blob is a large value shared by every checkpoint that holds it, stored
// once per thread by hash.
type Blob struct {
	Hash string // ContentHash(Body)
	// Body is a JSON document, kept byte for byte.
	Body []byte
}

// ContentHash names a message or blob body: 80 bits of its SHA-256, in
// hex. The stores refuse a body whose hash does not match, unless it is
// sealed (SealedHash).
func ContentHash(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:HashLen/2])
}

// sealedPrefix begins a sealed body (engine/seal: a body encrypted at
// rest); its hash follows the key id.
const sealedPrefix = `{"$sealed":"`

// SealedHash is the hash a sealed body is stored under: a body the engine
// encrypted at rest (engine/seal) is the JSON object
// {"$sealed":"<key id>","h":"<hash>","d":"<ciphertext>"}, whose hash names
// its plaintext, which no store can read. ok is false for any other body.
// A store accepts a sealed message or blob under the hash it carries and
// indexes no words of it (BodyWords).
func SealedHash(body []byte) (hash string, ok bool) {
	if !bytes.HasPrefix(body, []byte(sealedPrefix)) {
		return "", false
	}
	rest := body[len(sealedPrefix):]
	i := bytes.IndexByte(rest, '"')
	if i < 0 {
		return "", false
	}
	h, found := bytes.CutPrefix(rest[i:], []byte(`","h":"`))
	if !found || len(h) < HashLen+1 || h[HashLen] != '"' {
		return "", false
	}
	return string(h[:HashLen]), true
}

// HashLen is the length of a ContentHash.
const HashLen = 20

// Name is a thread, task or operation id in a message, cut short: ids may
// be 64 KB, and a message stays one readable line. %q and %v (and String)
// quote it; %s prints a plain word (letters, digits, -_.:/@+=,) bare, so a
// suggested command can be pasted, and quotes anything else, so an id with
// spaces or control characters is never printed raw. Past 64 bytes it ends
// with …(N bytes).
type Name string

// nameMax is how much of an id a message keeps.
const nameMax = 64

func (n Name) String() string { return fmt.Sprintf("%q", n) }

// Format implements fmt.Formatter.
func (n Name) Format(f fmt.State, verb rune) {
	s, rest := string(n), ""
	if len(s) > nameMax {
		s, rest = s[:nameMax], fmt.Sprintf("…(%d bytes)", len(n))
		for len(s) > 0 && !utf8.ValidString(s) { // not half a character
			s = s[:len(s)-1]
		}
	}
	if verb == 's' && word(s) {
		fmt.Fprint(f, s+rest)
		return
	}
	fmt.Fprint(f, strconv.Quote(s)+rest)
}

// word: s is safe to print bare, and to paste into a shell.
func word(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_.:/@+=,", r) {
			return false
		}
	}
	return s != ""
}

// TaskWrites are the writes of one finished task of the superstep that runs
// from checkpoint CheckpointID. They are stored the moment the task finishes,
// so a resume can skip the task.
type TaskWrites struct {
	ThreadID     string
	CheckpointID int64
	TaskID       string
	// Writes is the engine's JSON document for the task's writes and events.
	Writes    []byte
	CreatedAt time.Time
	// Epoch is the writer's fencing token, as for Checkpoint.Epoch.
	Epoch int64
}

// Event is something that happened while producing checkpoint CheckpointID
// (node started/finished, model called, context compacted, ...). Events are
// committed in the same transaction as their checkpoint.
type Event struct {
	ThreadID     string
	CheckpointID int64
	// Seq orders the events of one checkpoint, starting at 1.
	Seq       int
	Type      string
	Payload   []byte // JSON object
	CreatedAt time.Time
}

// Thread summarises one thread for listings.
type Thread struct {
	ID string
	// Checkpoints is how many the thread holds now (pruned ones gone).
	Checkpoints int
	LatestID    int64
	// UpdatedAt is the CreatedAt of checkpoint LatestID, the newest put.
	UpdatedAt time.Time
	// Latest is checkpoint LatestID as History lists it (its Meta, Base,
	// BlobRefs, ids and CreatedAt; State only when it has no Meta), read
	// with the list: a thread's run status is in its newest listing, so
	// a list of threads with their statuses is one read, not one a
	// thread.
	Latest Checkpoint
}

// Store persists checkpoint chains. Every method that touches I/O takes a
// context. All backends give identical results for identical calls; the
// rules below are the ones store/storetest enforces on each of them.
//
// Input. Thread, task and operation ids and event types are any non-empty
// valid UTF-8 without NUL, SQL metacharacters and 64 KB ids included, and
// are stored and found exactly. Documents (state, writes, payloads, draft
// bodies) are JSON of at most 10,000 levels of nesting, valid UTF-8, with
// numbers PostgreSQL's numeric can hold; \u0000 escapes and lone surrogate
// escapes are kept. Anything else is refused with an error matching
// ErrInvalid, before anything is written.
//
// Documents come back as the same JSON value, not necessarily the same
// bytes (PostgreSQL normalises jsonb). "The same content" compares JSON
// values the way jsonb does: whitespace, key order and number spelling
// (1.5 = 1.50) aside, the last of duplicate keys winning, lone surrogates
// distinct from each other and from U+FFFD.
//
// Atomicity. A refused or failed call leaves nothing behind. Bytes are
// never shared with the caller. A cancelled context makes a call fail with
// an error matching the context's error, having done nothing.
//
// Fencing. A writer that takes a thread over calls Fence and writes with
// the epoch it returned (Checkpoint.Epoch, TaskWrites.Epoch). Epochs are
// handed out from one counter per store, so an epoch never comes back: not
// for another thread, and not for a thread id deleted and used again.
// Inside the write's own transaction, after the no-op check: Epoch 0 is
// unfenced and accepted; the thread's current epoch is accepted; an Epoch
// lower than the thread's current one, or any epoch Fence handed out when
// the thread has none now (it was deleted since), is ErrFenced and nothing
// is written (even when the write would also conflict, be stale or miss
// its parent); any other Epoch was never handed out for the thread and is
// ErrInvalid. So a redelivered identical write from a fenced writer stays
// a harmless no-op, and a fenced writer's new work cannot fork the chain,
// nor reach the thread's next life after DeleteThread. Epoch is never part
// of "the same content".
type Store interface {
	// PutCheckpoint commits a checkpoint, its events, its new messages and
	// blobs, and the deletion of the writes it settles, in one
	// transaction. Events are numbered by position when Seq is 0 and
	// listed by Seq; an empty payload is {}. A message or blob whose hash is
	// not ContentHash(Body) is ErrInvalid. A CreatedAt the caller gives is
	// the row's, its events' and its new messages' (and the thread's
	// UpdatedAt), to the microsecond; a zero one is the store's clock. The
	// outcome, checked in this order:
	//   - same ID and same content (parent, meta, state, base, events' seq,
	//     type and payload) is a no-op, even after newer checkpoints, and keeps the
	//     stored row and its CreatedAt (a CreatedAt is not content); re-rooting is not a change of
	//     content: the parent of a re-rooted checkpoint matches both 0 and
	//     its RerootedFrom, so a redelivered put from before a prune and a
	//     put of a row read back after it are both no-ops;
	//   - an Epoch the thread's writers were fenced from is ErrFenced, one
	//     never handed out for the thread ErrInvalid (see Fencing above);
	//   - same ID with different content is ErrConflict;
	//   - an ID lower than the thread's newest is ErrStale (pruned IDs
	//     included: Prune keeps the newest, so IDs are never reused);
	//   - a ParentID that is not a checkpoint of the same thread is
	//     ErrNotFound.
	// Of racing puts of one new ID exactly one is stored; the others get
	// ErrConflict, or nil when their content is the same.
	PutCheckpoint(ctx context.Context, cp Checkpoint, events []Event) error
	// PutWrites stores one finished task's writes at once. In this order:
	// same key and same content is a no-op; a fenced Epoch is ErrFenced, one
	// never handed out ErrInvalid; different content is ErrConflict; the
	// checkpoint must exist in the same thread (ErrNotFound).
	PutWrites(ctx context.Context, w TaskWrites) error

	// Get returns one checkpoint or ErrNotFound (also for ids below 1 and
	// an empty thread id).
	Get(ctx context.Context, thread string, id int64) (Checkpoint, error)
	// Latest returns the thread's checkpoint with the highest ID, or
	// ErrNotFound when the thread has none.
	Latest(ctx context.Context, thread string) (Checkpoint, error)
	// History lists a thread's checkpoints newest first, only those with
	// ID < before when before > 0, at most limit when limit > 0. An unknown
	// thread gives an empty list. It reads metadata, not states: each row
	// has its Meta, Base, BlobRefs and ids, and State only when it has no
	// Meta (rows written before Meta existed); never Rebased.
	History(ctx context.Context, thread string, before int64, limit int) ([]Checkpoint, error)
	// Chain returns checkpoint id and its ancestors, newest first, up to
	// and including the nearest one that reads on its own: a base, a
	// rebased checkpoint, or one without a parent. Rows are whole, as Get
	// gives them. ErrNotFound when id is not a checkpoint of the thread.
	Chain(ctx context.Context, thread string, id int64) ([]Checkpoint, error)
	// Messages returns the thread's messages with these hashes, one per
	// distinct hash found, in no particular order; unknown hashes are
	// left out.
	Messages(ctx context.Context, thread string, hashes []string) ([]Message, error)
	// MessagesAt returns every message of the thread with this index (one
	// per branch that wrote a different one), ordered by CheckpointID then
	// Hash.
	MessagesAt(ctx context.Context, thread string, index int64) ([]Message, error)
	// MessagesIn returns every message of the thread with an index in
	// [from, to], ordered by Index, then CheckpointID, then Hash, in one
	// read: a transcript's range costs one round trip, not one per index.
	// from > to, or an unknown thread, gives none.
	MessagesIn(ctx context.Context, thread string, from, to int64) ([]Message, error)
	// Search finds the thread's messages that hold, for each word of the
	// query (SearchQuery: letters and numbers, without case), a word that
	// begins with it: the words of the body's JSON string values, not its
	// keys (BodyWords). Every message the thread stores is searched: every
	// branch's, compacted ones, those of pruned checkpoints. They come
	// ordered by Index, then CheckpointID, then Hash, with their bodies, at
	// most limit when limit > 0. A query with no word, or with more than
	// MaxQueryWords, is ErrInvalid; an
	// unknown thread gives none. A full-text index the put of a message
	// keeps in its transaction answers it, never a read of every message:
	// a migration indexes the messages a store held before it.
	Search(ctx context.Context, thread, query string, limit int) ([]Message, error)
	// Blobs returns the thread's blobs with these hashes, one per distinct
	// hash found, in no particular order; unknown hashes are left out.
	Blobs(ctx context.Context, thread string, hashes []string) ([]Blob, error)
	// Bodies is Messages(thread, messages) and Blobs(thread, blobs), by
	// their rules (one per distinct hash found, in no particular order,
	// unknown hashes left out), read at once: one round trip for the
	// bodies a checkpoint's rebuild reads after its chain. Where the
	// caller knows it, messages' first and last are the first and the
	// last of the stretch of the conversation it reads (a rebuild's
	// transcript): a store may read the messages between their indexes
	// at once, but must give the same answer for any order.
	Bodies(ctx context.Context, thread string, messages, blobs []string) ([]Message, []Blob, error)
	// Size is how many bytes the thread's rows hold in all of the store's
	// tables (checkpoints, writes, events, messages, blobs, drafts and its
	// writer epoch): the lengths of their texts and documents plus 8 for
	// each number and time; not the search index, which holds no row of
	// its own. 0 for an unknown thread. A running total kept by the
	// writes in their transactions, not a count of the rows: it costs the
	// same at any length (SizeCounter counts).
	Size(ctx context.Context, thread string) (int64, error)
	// Writes lists the stored task writes of one checkpoint's superstep,
	// ordered by task ID bytewise; checkpointID 0 lists the whole thread's
	// (one query for a thread's unsettled writes), ordered by checkpoint
	// then task ID.
	Writes(ctx context.Context, thread string, checkpointID int64) ([]TaskWrites, error)
	// Events lists a checkpoint's events in Seq order; checkpointID 0 lists
	// the whole thread's, ordered by checkpoint then Seq.
	Events(ctx context.Context, thread string, checkpointID int64) ([]Event, error)
	// Threads lists every thread that has checkpoints, ordered by ID
	// bytewise. What it lists is kept as checkpoints are put, pruned and
	// deleted, not counted from them: a listing's cost grows with the
	// threads, not with their checkpoints.
	Threads(ctx context.Context) ([]Thread, error)
	// RecentThreads lists threads as Threads does, the most recently
	// updated first (UpdatedAt descending, then ID descending bytewise):
	// only those after the place before (ThreadCursor: from the newest
	// when it is zero; a bare ID is that thread's place now, ErrNotFound
	// when the store has no thread of that ID), and at most limit of them
	// when limit > 0. rest is how many threads come after the last one
	// listed (0 when none is listed). A page reads its own threads' rows,
	// not the whole list (SQLite and PostgreSQL find them on an index of
	// updated_at and thread_id), so a screenful costs the same at any
	// count; paging on from the last one
	// listed (CursorAt) lists every thread once, a thread written between
	// pages (moved to the top) included.
	RecentThreads(ctx context.Context, before ThreadCursor, limit int) (page []Thread, rest int, err error)
	// Fence makes the caller the thread's newest writer: it atomically
	// hands out a new epoch, higher than every epoch the store handed out
	// before for any thread (1 the first time in a new store), makes it the
	// thread's writer epoch and returns it. Writes carrying a lower epoch
	// are refused from then on. The epoch and the counter are stored (they
	// survive restarts); the epoch needs no checkpoint.
	Fence(ctx context.Context, thread string) (epoch int64, err error)
	// Epoch is the thread's writer epoch as the last Fence set it, or 0
	// when it has none (never fenced, or deleted since). It only reads:
	// a writer that fenced the thread before and still finds its epoch
	// there is its newest writer, as if it had fenced again.
	Epoch(ctx context.Context, thread string) (int64, error)

	// DeleteThread removes every row of a thread in every table, in one
	// transaction: checkpoints, writes, events, messages, blobs, drafts and
	// its writer epoch. A thread with none of these is ErrNotFound. Other
	// threads are untouched, and the thread can start afresh at ID 1. The
	// store's epoch counter stays, so every writer that fenced the thread
	// before is fenced out of it for good (ErrFenced), also once a new
	// writer fences it again; nothing of the thread, its id included, is
	// kept. A write in flight that fenced the thread commits before the
	// delete or is refused.
	DeleteThread(ctx context.Context, thread string) error

	// Prune deletes some checkpoints of a thread to reclaim space, in one
	// transaction: the checkpoints ids (duplicates count once) with their
	// pending writes and events. Every remaining checkpoint of the thread
	// whose parent it deleted is re-rooted in the same transaction: its
	// ParentID becomes 0 and its RerootedFrom the parent it had, so a kept
	// chain never points at a missing row. A re-rooted checkpoint that is
	// not a base and not yet rebased must come with a Rebase (its state
	// made self-contained), which is stored as its Rebased, so every kept
	// checkpoint still reads in full. Blobs that no remaining checkpoint
	// refers to (BlobRefs, Rebase.BlobRefs) are deleted too.
	//
	// Messages and drafts are never deleted: messages are the raw
	// transcript, drafts are records of side effects that happened, and a
	// retry must still find them. The writer epoch stays.
	//
	// In this order: a thread with no checkpoints is ErrNotFound; an id
	// that is not a checkpoint of the thread is ErrNotFound; the thread's
	// newest checkpoint is ErrInvalid (Prune never removes the head, so
	// IDs keep growing; DeleteThread removes a whole thread); a missing
	// Rebase, or one for a checkpoint this prune does not re-root, is
	// ErrInvalid. On any error nothing is deleted. An empty list deletes
	// nothing.
	Prune(ctx context.Context, thread string, ids []int64, rebase []Rebase) (PruneResult, error)

	// Lock makes the caller the one live writer of a thread, across
	// processes. It fails at once with ErrLocked when another writer holds
	// it. A writer that dies (even by SIGKILL) releases it. Releasing twice
	// is harmless and never frees a later holder's lock. A store that makes
	// the holder's commits durable at release (sqlite's shared fsync) says
	// so when it cannot, with an error matching ErrNotDurable.
	Lock(ctx context.Context, thread string) (release func() error, err error)

	Close() error
}

// Rebase is the self-contained state Prune stores for a kept checkpoint
// whose parent it deletes.
type Rebase struct {
	ID       int64
	State    []byte
	BlobRefs []string
}

// PruneResult is what Store.Prune deleted and re-rooted.
type PruneResult struct {
	// Deleted are the checkpoint IDs removed, ascending.
	Deleted []int64
	// Writes and Events count the rows deleted with those checkpoints;
	// Blobs the blobs nothing referred to any more.
	Writes, Events, Blobs int
	// Rerooted are the kept checkpoints whose parent was deleted, by
	// ascending ID.
	Rerooted []Reroot
}

// Reroot is a kept checkpoint whose parent Prune deleted.
type Reroot struct {
	ID   int64 // the kept checkpoint
	From int64 // the parent it had, now deleted
}

var (
	// ErrNotFound: no such thread, checkpoint, parent or draft.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the same checkpoint or write key already holds different content.
	ErrConflict = errors.New("conflicting content for an existing version")
	// ErrStale: a checkpoint older than the newest one of its thread.
	ErrStale = errors.New("older than the newest checkpoint of the thread")
	// ErrLocked: another live process is running the thread.
	ErrLocked = errors.New("thread is being run by another process")
	// ErrFenced: the write carries an epoch older than the thread's: a
	// newer writer took the thread over (see Store.Fence).
	ErrFenced = errors.New("a newer writer took over the thread: this process's writes are refused; its work will be redone by the new writer")
	// ErrInvalid: the call's input was refused (a bad id, a document that
	// is not JSON or is nested too deep, ...); nothing was written.
	ErrInvalid = errors.New("invalid input")
	// ErrNotDurable: commits the store reported done may not be on disk
	// (an fsync failed); a crash or a power cut now could lose them.
	ErrNotDurable = errors.New("committed writes may not be on disk")
	// ErrDiskFull: the disk holding the store has no space left; the
	// write that failed stored nothing, and once there is space the same
	// call can be made again.
	ErrDiskFull = errors.New("the disk is full")
)

// Draft is an outgoing draft made by a side-effecting tool. It is keyed by
// the operation id the engine recorded in a checkpoint before the call, so
// a retry after a crash finds it instead of making a second one.
type Draft struct {
	ThreadID    string
	OperationID string
	Body        []byte // JSON object
	CreatedAt   time.Time
	// Epoch is the writer's fencing token, as for Checkpoint.Epoch: checked
	// when a new draft would be inserted, not stored (reads give 0).
	Epoch int64
}

// Drafts is the side-effect table that lives in the same store; every
// backend implements it. A draft needs no checkpoint; DeleteThread removes
// a thread's drafts with the rest of it, and Prune never does.
type Drafts interface {
	// CreateDraft inserts d unless a draft with the same thread and
	// operation id exists. It returns the stored draft and whether this call
	// created it. In this order, inside one transaction:
	//   - an existing draft is returned with false, its body and its
	//     CreatedAt, whatever body and epoch the call brought (a fenced
	//     writer may still find what was done);
	//   - an Epoch below the thread's is ErrFenced, above it ErrInvalid,
	//     and nothing is written (a fenced writer cannot make a new draft);
	//   - otherwise d is inserted and returned with true.
	// Of racing calls with one key exactly one gets true. Ids and body
	// follow Store's input rules.
	CreateDraft(ctx context.Context, d Draft) (Draft, bool, error)
	// Draft returns one draft or ErrNotFound.
	Draft(ctx context.Context, thread, operationID string) (Draft, error)
	// ListDrafts lists a thread's drafts ordered by operation id bytewise;
	// an unknown thread gives an empty list.
	ListDrafts(ctx context.Context, thread string) ([]Draft, error)
}

// Watcher is a store that tells a waiter that a thread changed, also when
// another handle or another process made the change: the TUI follows a
// thread that a run elsewhere is writing. Every backend implements it
// (capability Watch in store/storetest): memory in-process, SQLite by
// polling PRAGMA data_version, PostgreSQL by LISTEN/NOTIFY.
type Watcher interface {
	// Watch returns a channel that receives once a PutCheckpoint that stored
	// a new checkpoint of the thread has committed, whichever handle or
	// process made it. It is armed when Watch returns: such a commit after
	// that wakes it. Wake-ups coalesce (the channel holds one; several
	// commits may give one receive), so the receiver re-reads the thread.
	// A put that stored nothing (a no-op, a refused put, a transaction
	// rolled back) and new checkpoints of other threads do not wake it;
	// its deletion (DeleteThread committed) does, so that a viewer
	// following it can say it is gone; other changes of the thread (a
	// prune) may, and so may
	// a lost connection to the server, once, since a commit may have been
	// missed. The channel is closed when ctx is done or the store closes.
	Watch(ctx context.Context, thread string) (<-chan struct{}, error)
}

// Erasing is a store whose files may keep, for a while after DeleteThread
// returns, the text of the thread it deleted: SQLite's WAL holds the pages
// as they were before the delete, and the file its older pages, as long as
// a read that began before the delete lasts (another connection's, in any
// process), and then until the WAL is emptied. A store that keeps nothing
// (memory) says so; PostgreSQL is not one: a deleted row stays in its
// table's pages until VACUUM reuses them, and in the server's WAL until it
// is recycled, which the server owns (capability Erasure in
// store/storetest).
type Erasing interface {
	// Unerased says what keeps text that a DeleteThread of any handle or
	// process removed in the store's files, in a few words ("a read by
	// pid 1234": the process, when the store can tell), or "" when
	// nothing does and the text is in none of its files. With no reader,
	// a delete leaves nothing and Unerased is "". What a reader kept is
	// erased once it ends, by the first of: the deleting handle's next
	// write or Close, Unerased, and any later Open or Close of the store,
	// by any process.
	Unerased(ctx context.Context) (string, error)
}

// DocKind names a document Reseal passes.
type DocKind string

// What Reseal passes: every document of a thread the engine may seal.
const (
	DocState   DocKind = "state"   // a checkpoint's State
	DocRebased DocKind = "rebased" // a checkpoint's Rebased
	DocHead    DocKind = "head"    // the thread's head snapshot
	DocMessage DocKind = "message" // a message body (its hash given)
	DocBlob    DocKind = "blob"    // a blob body (its hash given)
	DocWrites  DocKind = "writes"  // a task's writes
	DocDraft   DocKind = "draft"   // a draft's body
)

// Resealer is a store that rewrites a thread's documents in place: how a
// thread's encryption key is rotated (engine/seal). Every backend
// implements it (clause Reseal in store/storetest).
type Resealer interface {
	// Reseal passes each document of the thread of the kinds above to
	// fn (hash is the message's or blob's, "" for the others) and, in
	// one transaction, stores what fn returns in its place where it
	// differs; it returns how many it changed. Listings, events, ids and
	// times are never passed nor changed. In this order, with nothing
	// written: a thread with no checkpoint is ErrNotFound; an error of
	// fn is returned (wrapped); a document fn returns that is not JSON,
	// or a message or blob body not named by its hash (ContentHash, or
	// the hash a sealed body carries), or a message body whose search
	// words (BodyWords) differ from the stored one's, is ErrInvalid: the
	// search index stays true without being rebuilt.
	Reseal(ctx context.Context, thread string, fn func(kind DocKind, hash string, doc []byte) ([]byte, error)) (changed int, err error)
}

// LockHolders is a store that can say, cheaply, who holds a thread's
// writer lock (Store.Lock) without taking or disturbing it.
type LockHolders interface {
	// LockHolder describes the live holder of the thread's lock in a few
	// words ("pid 1234", "pid 1234 on 10.0.0.5"), "" when no live process
	// holds it. A holder this store cannot name shows as "another process".
	LockHolder(ctx context.Context, thread string) (string, error)
}

// SizeCounter is a store that can count a thread's size from its rows,
// as Size once did at every call: what Size's running total must equal
// (clause SizeKept in store/storetest). Every backend implements it.
type SizeCounter interface {
	// CountSize is Size's figure, counted from every row of the thread.
	CountSize(ctx context.Context, thread string) (int64, error)
}
