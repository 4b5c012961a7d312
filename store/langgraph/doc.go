// Package langgraph reads the checkpoint databases that LangGraph's own
// checkpointers write (Python and LangGraph.js; SqliteSaver and
// PostgresSaver), read-only, with no LangGraph code: rewind can then show
// any LangGraph thread as it shows its own.
//
// # Opening
//
// Detect tells what a store spec (sqlite:PATH, PATH.db, postgres://…,
// memory:) names, without writing anything: KindLangGraph (LangGraph's
// tables: SQLite checkpoints and writes; PostgreSQL checkpoints,
// checkpoint_blobs, checkpoint_writes and checkpoint_migrations, whose
// migration number and columns Detected.Schema reports; ShallowPostgresSaver's
// too, Detected.Shallow, which keep one checkpoint per thread and
// namespace, its id in its document, one blob per channel), KindRewind (a
// rewind store, Detected.Rewind its schema version, or a place where
// rewind's opener makes one), or an error matching ErrNeither naming what
// was found (a PostgresSaver whose setup() stopped half way, tables of
// LangGraph's names with other columns, another app's file); a server it
// cannot reach matches ErrUnreachable. Open opens a LangGraph database as a Source:
// SQLite with mode=ro (which still reads a writer's WAL; a WAL file whose
// writer has closed opens immutable, so nothing is left beside it) and
// query_only; PostgreSQL in read-only, repeatable-read transactions on a
// session whose default is read only.
//
// # Values
//
// Decode turns a stored value (the type column: msgpack with LangGraph's
// extension codes 0–7, json with LangChain's {"lc": 1, "type":
// "constructor", …} objects, null, empty, bytes) into plain values that
// encoding/json prints and a generic tree walks, typed objects marked with
// "$type" (see KeyType). A value EncryptedSerializer stored ("msgpack+aes":
// AES-EAX, nonce ‖ tag ‖ ciphertext) is opened with the key in
// LANGGRAPH_AES_KEY, as LangGraph takes it (EnvAESKey). What it cannot read
// (pickle, encrypted without the key or with another, a custom serializer,
// a corrupt value) is {"$opaque": type, "$size": n, "$error": why}, never
// an error. A value is read within bounds (nested at most 512 levels deep,
// 2,097,152 items), however deep or wide it is stored: past them, it
// is opaque with why, and a checkpoint's Damaged names the channel. Messages normalises LangChain messages (role human, ai, tool,
// system; content; tool calls with ids, joined to the tool messages that
// answer them).
//
// # The interface
//
// Source is what a browser reads, and all it reads:
//
//	About() About                                       what is open ("LangGraph database, read-only")
//	Threads(ctx) ([]Thread, error)                       threads, each with its chains (namespaces)
//	History(ctx, chain, before, limit) ([]Listing, error) a chain's listings, newest first, no values
//	Checkpoint(ctx, chain, id) (Checkpoint, error)       the values at one checkpoint ("" = newest)
//	Writes(ctx, chain, id) ([]TaskWrites, error)          what the superstep from id stored, by task
//	Close() error
//
// A Chain is a thread and a namespace: "" for the root graph, "node:<task
// id>" for a run of a subgraph (nested ones joined by "|"), which hangs off
// the parent chain's checkpoint whose task ran it
// (Namespace.ParentCheckpoint). Ids are strings. A Listing has the id,
// parent, step, source (input, loop, update for update_state, fork), time,
// the tasks due next (nodes, then one per queued Send) and counts. A
// chain's parent links always form a tree: of a parent cycle (a damaged
// table), the oldest checkpoint shows as a root, its Damaged naming the
// cycle (cycles.go). A Checkpoint adds every channel's decoded value
// (internal channels marked; __pregel_tasks's Sends also in Next, with
// their arguments) and the metadata, as LangGraph's get_state shows them
// (state.go): the null task's writes (Command(update=…)) applied, and at
// the newest checkpoint of a chain the writes of the tasks that finished
// in an unfinished superstep, those tasks out of Next; a LangGraph.js
// DeltaChannel rebuilt from its nearest snapshot and the writes since
// (delta.go); a functional-API run's entrypoint in Next where __start__
// would be, its returned value (__end__) as its state (functional.go);
// Writes lists a superstep's tasks in the order LangGraph applies them
// (task paths, taskorder.go), a functional-API call named from its id;
// Stored keeps what the database holds where they differ (a
// DeltaChannel's: the snapshot as stored, or the ancestor whose snapshot
// it was rebuilt from and how many writes since applied). A reducer
// channel no node has written is shown by LangGraph as its default ([]
// for a list, from the graph's declaration), which PostgresSaver (both
// LangGraphs) and Python's SqliteSaver do not store: they store a channel
// from its first write on (a blob per version written; a checkpoint
// document of the channels with versions). Nothing in the database tells
// a reducer with a default from a LastValue not yet written (both hold a
// list once written; JS reducers need not have a default), so the
// reader shows no [] it cannot read: such a checkpoint has
// FromFirstWrite, and Absent names the channels the chain's other rows
// hold that it does not (browse.DescribeAbsent words it; a channel no row
// of the thread names, such as testdata's t-empty's, cannot be named).
// LangGraph.js's SqliteSaver stores the [] itself. TaskWrites name LangGraph's special writes (error,
// scheduled, interrupt, resume) and carry the error text and the
// interrupt values.
//
// # How rewind's uses map to it
//
// rewind's engine could implement Source without changing (an adapter in
// engine_source_test.go does, and the same walk reads both). What cli/ and
// tui/ read from engine.Engine today, and its counterpart:
//
//   - Engine.Threads (rewind threads, the TUI's thread list) → Threads;
//     a rewind thread has one chain, NS "", and Latest is its newest id.
//   - Engine.History(thread, before, limit) (rewind log, the TUI timeline,
//     paged: first 200, then 2000) → History(chain, before, limit), ids
//     as text. Listing.Next is Checkpoint.Tasks' nodes, WrittenBy is
//     Metadata.Nodes; rewind's message count has no LangGraph counterpart
//     in a listing (its values are not read), Counts say what is.
//   - Engine.Get and Engine.Latest (rewind show, diff, the TUI's detail)
//     → Checkpoint(chain, id or ""); Values are Channels, State() gives
//     them as engine.Values for engine.Diff (rewind diff, the TUI's diff
//     pane), which matches LangChain messages by their "id".
//   - Engine.Ancestors (how two checkpoints of rewind diff stand) → walk
//     Listing.Parent over History.
//   - Engine.PendingWrites (show's stored writes, the TUI's pending work)
//     and Checkpoint.Applied (the writes that made a checkpoint) → Writes:
//     LangGraph stores a superstep's writes under the checkpoint it ran
//     from, so Writes(id) is the pending work of a checkpoint with tasks
//     due and, for one with children, what made them (rewind: its
//     PendingWrites, and its loop children's Applied).
//   - Engine.Events (rewind events) → Writes: LangGraph keeps no event log;
//     its writes, interrupts and errors are the record.
//   - Engine.Message (show --message) → Checkpoint(…).Messages(): LangGraph
//     keeps every message in the channel (no compaction).
//
// Everything else the CLI and TUI do writes (run, resume, fork, approve,
// discard, rm, prune) and has no place here: a LangGraph source refuses it
// by not having it.
package langgraph
