package sqlite

import "rewind/store"

// The statements, prepared once per pool (see pool.prepare).

// The multi-row INSERTs of a put's rows (see insertRows): the put's
// parameters first (?1 to ?fixed), then each row's own.
var (
	putEvents = rowsInsert{0, `INSERT INTO graph_events (thread_id, checkpoint_id, created_at, seq, type, payload) VALUES `, `(?1, ?2, ?3`, 3, 3}
	// A hash the thread holds already keeps its first row (a message's
	// key is kept by triggers: migrations[8]). OR IGNORE, not ON CONFLICT
	// DO NOTHING: no constraint of these tables can then abort the
	// statement half-way, so SQLite keeps no statement journal for it (a
	// fifth of a multi-row INSERT's cost). The key is the only constraint
	// a put's rows can meet: every column is bound, never NULL.
	putMessages = rowsInsert{1, `INSERT OR IGNORE INTO graph_message_bodies (thread_id, checkpoint_id, created_at, hash, idx, body) VALUES `, `(?1, ?2, ?3`, 3, 3}
	putBlobs    = rowsInsert{2, `INSERT OR IGNORE INTO graph_blobs (thread_id, created_at, hash, body) VALUES `, `(?1, ?2`, 2, 2}
)

// The statements, all with bound parameters.
const (
	sqlNewest        = `SELECT max(checkpoint_id) FROM graph_checkpoints WHERE thread_id = ?`
	sqlCheckpoint    = `SELECT parent_id, rerooted_from, base, meta, state FROM graph_checkpoints WHERE thread_id = ? AND checkpoint_id = ?`
	sqlPutCheckpoint = `INSERT INTO graph_checkpoints (thread_id, checkpoint_id, parent_id, base, created_at, meta, blob_refs, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	sqlSettle        = `DELETE FROM graph_writes WHERE thread_id = ? AND checkpoint_id = ?`
	sqlPutWrites     = `INSERT INTO graph_writes (thread_id, checkpoint_id, task_id, writes, created_at) VALUES (?, ?, ?, ?, ?)`
	sqlDeleteEvents  = `DELETE FROM graph_events WHERE thread_id = ?`
	sqlDeleteWrites  = `DELETE FROM graph_writes WHERE thread_id = ?`
	sqlDeleteThread  = `DELETE FROM graph_checkpoints WHERE thread_id = ?`
	sqlDeleteMsgs    = `DELETE FROM graph_message_bodies WHERE thread_id = ?`
	sqlDeleteMsgKeys = `DELETE FROM graph_message_keys WHERE thread_id = ?`
	// The thread's rows of the search index, found through it.
	sqlDeleteMsgWords = `DELETE FROM graph_message_words WHERE rowid IN
		(SELECT rowid FROM graph_message_words WHERE graph_message_words MATCH '"' || rewind_thread_word(?) || '"')`
	sqlDeleteBlobs  = `DELETE FROM graph_blobs WHERE thread_id = ?`
	sqlDeleteDrafts = `DELETE FROM graph_drafts WHERE thread_id = ?`
	sqlDeleteEpoch  = `DELETE FROM graph_epochs WHERE thread_id = ?`
	sqlDeleteHead   = `DELETE FROM graph_heads WHERE thread_id = ?`
	sqlDeleteSize   = `DELETE FROM graph_sizes WHERE thread_id = ?`
	// Tenants (tenant.go). A thread without an owner row is the default
	// tenant's.
	sqlDeleteThreadTenant = `DELETE FROM graph_thread_tenants WHERE thread_id = ?`
	sqlThreadTenant       = `SELECT tenant FROM graph_thread_tenants WHERE thread_id = ?`
	sqlThreadTenants      = `SELECT thread_id, tenant FROM graph_thread_tenants`
	sqlTenants            = `SELECT name FROM graph_tenants ORDER BY name`
	sqlAddTenant          = `INSERT OR IGNORE INTO graph_tenants (name) VALUES (?)`
	// A claim takes an unclaimed thread that holds no row.
	sqlClaimThread = `INSERT INTO graph_thread_tenants (thread_id, tenant) SELECT ?1, ?2
		WHERE NOT EXISTS (SELECT 1 FROM graph_thread_tenants WHERE thread_id = ?1)
		AND NOT EXISTS (SELECT 1 FROM graph_threads WHERE thread_id = ?1)
		AND NOT EXISTS (SELECT 1 FROM graph_drafts WHERE thread_id = ?1)
		AND NOT EXISTS (SELECT 1 FROM graph_epochs WHERE thread_id = ?1)`
	// One head snapshot a thread: a new one takes the place of the old.
	sqlPutHead = `INSERT INTO graph_heads (thread_id, checkpoint_id, doc) VALUES (?1, ?2, ?3)
		ON CONFLICT (thread_id) DO UPDATE SET checkpoint_id = ?2, doc = ?3`
	sqlEpoch = `SELECT epoch FROM graph_epochs WHERE thread_id = ?`
	// What PutCheckpoint decides by, in one statement: the thread's newest
	// id, its writer epoch (NULL: none), the epoch counter, whether
	// checkpoint ?2 (the parent) exists and whether checkpoint ?3 (the one
	// it settles) has writes to settle (most have none: no DELETE then).
	sqlPutCheckpointState = `SELECT (SELECT max(checkpoint_id) FROM graph_checkpoints WHERE thread_id = ?1),
	(SELECT epoch FROM graph_epochs WHERE thread_id = ?1), (SELECT issued FROM graph_epoch_counter),
	EXISTS (SELECT 1 FROM graph_checkpoints WHERE thread_id = ?1 AND checkpoint_id = ?2),
	EXISTS (SELECT 1 FROM graph_writes WHERE thread_id = ?1 AND checkpoint_id = ?3)`
	// What PutWrites decides by: the task's stored writes (NULL: none),
	// the thread's writer epoch, the epoch counter and whether checkpoint
	// ?2 exists.
	sqlPutWritesState = `SELECT (SELECT writes FROM graph_writes WHERE thread_id = ?1 AND checkpoint_id = ?2 AND task_id = ?3),
	(SELECT epoch FROM graph_epochs WHERE thread_id = ?1), (SELECT issued FROM graph_epoch_counter),
	EXISTS (SELECT 1 FROM graph_checkpoints WHERE thread_id = ?1 AND checkpoint_id = ?2)`
	sqlIssued   = `SELECT issued FROM graph_epoch_counter`
	sqlPutDraft = `INSERT INTO graph_drafts (thread_id, operation_id, body, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`
	// The next epoch is above the counter and, in case the counter ever
	// fell behind, above the thread's own.
	sqlNextEpoch = `UPDATE graph_epoch_counter
		SET issued = max(issued, coalesce((SELECT epoch FROM graph_epochs WHERE thread_id = ?), 0)) + 1 RETURNING issued`
	sqlFence = `INSERT INTO graph_epochs (thread_id, epoch, fenced_at) VALUES (?1, ?2, ?3)
		ON CONFLICT (thread_id) DO UPDATE SET epoch = ?2, fenced_at = ?3`

	// Prune's statements take the ids as one JSON array (?2), a single
	// bound parameter however many there are.
	pruneIDs      = `(SELECT value FROM json_each(?2))`
	sqlPruneFound = `SELECT checkpoint_id FROM graph_checkpoints WHERE thread_id = ?1 AND checkpoint_id IN ` + pruneIDs
	pruneKept     = ` WHERE thread_id = ?1 AND parent_id IN ` + pruneIDs + ` AND checkpoint_id NOT IN ` + pruneIDs
	// The kept rows whose parent goes, and whether each reads on its own.
	sqlPruneRerooted    = `SELECT checkpoint_id, parent_id, base OR rebased IS NOT NULL, blob_refs FROM graph_checkpoints` + pruneKept
	sqlPruneReroot      = `UPDATE graph_checkpoints SET parent_id = NULL, rerooted_from = parent_id` + pruneKept
	sqlRebase           = `UPDATE graph_checkpoints SET rebased = ?3, blob_refs = ?4 WHERE thread_id = ?1 AND checkpoint_id = ?2`
	sqlPruneWrites      = `DELETE FROM graph_writes WHERE thread_id = ?1 AND checkpoint_id IN ` + pruneIDs
	sqlPruneEvents      = `DELETE FROM graph_events WHERE thread_id = ?1 AND checkpoint_id IN ` + pruneIDs
	sqlPruneCheckpoints = `DELETE FROM graph_checkpoints WHERE thread_id = ?1 AND checkpoint_id IN ` + pruneIDs
	// blob_refs come before state in the record: this reads no state.
	sqlPruneBlobs = `DELETE FROM graph_blobs WHERE thread_id = ?1 AND hash NOT IN
		(SELECT r.value FROM graph_checkpoints c, json_each(c.blob_refs) r WHERE c.thread_id = ?1)`

	// Every reader of checkpoints scans these columns, in this order. A
	// document is read as a BLOB, which the driver hands over as bytes of
	// its own that scan keeps (owned): read as TEXT, database/sql copied
	// each string once more into a []byte, a third of a load's allocations.
	cpColumns = `checkpoint_id, parent_id, rerooted_from, base, created_at, CAST(meta AS BLOB), CAST(blob_refs AS BLOB)`
	// headOf is the row's head snapshot, NULL for every row but one. A
	// chain's rows say only '' for it (headMark: a lookup a row made
	// reading 30 rows a half slower), but for the row asked for (?2): a
	// cold load of the newest reads its whole chain, the head, in one
	// statement. Chain reads the one it stops at otherwise.
	headOf            = `(SELECT h.doc FROM graph_heads h WHERE h.thread_id = c.thread_id AND h.checkpoint_id = c.checkpoint_id)`
	headMark          = `CASE WHEN c.checkpoint_id = ?2 THEN ` + headOf + ` WHEN c.checkpoint_id IS (SELECT checkpoint_id FROM graph_heads WHERE thread_id = ?1) THEN '' END`
	selectCheckpoints = `SELECT ` + cpColumns + `, CAST(state AS BLOB), CAST(rebased AS BLOB), CAST(` + headOf + ` AS BLOB) FROM graph_checkpoints c `
	selectChain       = `SELECT ` + cpColumns + `, CAST(state AS BLOB), CAST(rebased AS BLOB), CAST(` + headMark + ` AS BLOB) FROM graph_checkpoints c `
	sqlHeadDoc        = `SELECT CAST(doc AS BLOB) FROM graph_heads WHERE thread_id = ? AND checkpoint_id = ?`
	// A row reads on its own: a base, a rebase, a root or the head snapshot's.
	readsAlone = `(base OR rebased IS NOT NULL OR parent_id IS NULL OR checkpoint_id IS (SELECT checkpoint_id FROM graph_heads WHERE thread_id = ?1))`
	sqlGet     = selectCheckpoints + `WHERE thread_id = ? AND checkpoint_id = ?`
	sqlLatest  = selectCheckpoints + `WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1`
	// A listing reads the state only of rows without meta: SQLite then
	// never loads the state's pages of the others.
	sqlHistory = `SELECT ` + cpColumns + `, CAST(CASE WHEN meta IS NULL THEN state END AS BLOB) FROM graph_checkpoints
		WHERE thread_id = ? AND checkpoint_id < ? ORDER BY checkpoint_id DESC LIMIT ?`
	// Chain walks parent_id reading only the small columns, then reads the
	// rows it found. Parents have lower IDs; Chain sorts in Go, so that
	// SQLite does not copy the states into a sorter.
	sqlChain      = chainFrom + chainRest
	sqlChainOwned = chainFrom + ownedBy + chainRest
	chainFrom     = `WITH RECURSIVE chain (id, parent, last) AS (
			SELECT checkpoint_id, parent_id, ` + readsAlone + `
			FROM graph_checkpoints WHERE thread_id = ?1 AND checkpoint_id = ?2`
	chainRest = `
			UNION ALL
			SELECT c.checkpoint_id, c.parent_id, c.base OR c.rebased IS NOT NULL OR c.parent_id IS NULL OR
				c.checkpoint_id IS (SELECT checkpoint_id FROM graph_heads WHERE thread_id = ?1)
			FROM chain JOIN graph_checkpoints c ON c.thread_id = ?1 AND c.checkpoint_id = chain.parent
			WHERE NOT chain.last
		)
		SELECT c.checkpoint_id, c.parent_id, c.rerooted_from, c.base, c.created_at, CAST(c.meta AS BLOB), CAST(c.blob_refs AS BLOB),
			CAST(c.state AS BLOB), CAST(c.rebased AS BLOB), CAST(` + headMark + ` AS BLOB)
		FROM chain CROSS JOIN graph_checkpoints c ON c.thread_id = ?1 AND c.checkpoint_id = chain.id`
	// Chain reads first the rows from the nearest row at or below id that
	// reads on its own up to id, in one index range: the whole chain when
	// its branch forks nowhere in between (Chain walks the parents in Go,
	// and falls back to sqlChain when one is not in the range). A third
	// less CPU than sqlChain for a 40-row chain.
	sqlChainRange      = selectChain + `WHERE thread_id = ?1 AND checkpoint_id <= ?2 AND ` + chainRangeRest
	sqlChainRangeOwned = selectChain + `WHERE thread_id = ?1 AND checkpoint_id <= ?2` + ownedBy + ` AND ` + chainRangeRest
	// The owned variants (ChainOwned) read the chain only where the
	// thread's owner is ?3 (no owner row: the default tenant's), in the
	// same statement: a tenant's handle then reads no owner of its own
	// before a load (a new process's first load paid a tenth of its CPU
	// for that query).
	ownedBy        = ` AND coalesce((SELECT tenant FROM graph_thread_tenants WHERE thread_id = ?1), '` + store.DefaultTenant + `') = ?3`
	chainRangeRest = `checkpoint_id >= coalesce((
			SELECT checkpoint_id FROM graph_checkpoints
			WHERE thread_id = ?1 AND checkpoint_id <= ?2 AND ` + readsAlone + `
			ORDER BY checkpoint_id DESC LIMIT 1), 0)
		ORDER BY checkpoint_id DESC`
	// Messages and Blobs take the hashes as one JSON array (?2); a
	// message's hash finds its row through graph_message_keys.
	selectMessages = `SELECT hash, idx, CAST(body AS BLOB), checkpoint_id, created_at FROM graph_message_bodies `
	byHashes       = `WHERE thread_id = ?1 AND (idx, hash) IN
		(SELECT idx, hash FROM graph_message_keys WHERE thread_id = ?1 AND hash IN (SELECT value FROM json_each(?2)))`
	sqlMessages   = selectMessages + byHashes
	sqlMessagesAt = selectMessages + `WHERE thread_id = ?1 AND idx = ?2 ORDER BY checkpoint_id, hash`
	// MessagesIn: one range of graph_message_bodies' key.
	sqlMessagesIn = selectMessages + `WHERE thread_id = ?1 AND idx BETWEEN ?2 AND ?3 ORDER BY idx, checkpoint_id, hash`
	// Search: ?2 is an FTS5 query (searchMatch). sqlSearchAll reads
	// every hit; sqlSearch the first ?3, reading the bodies of the hits up
	// to the index of the ?3rd alone (the ones after cannot be among the
	// first ?3 by index, checkpoint and hash): a common word's first 500
	// hits of a 1,000-turn thread read 500 bodies, not 2,200.
	searchHits   = `SELECT idx, hash FROM graph_message_words WHERE graph_message_words MATCH ?2`
	searchBodies = `SELECT b.hash, b.idx, CAST(b.body AS BLOB), b.checkpoint_id, b.created_at
		FROM m CROSS JOIN graph_message_bodies b ON b.thread_id = ?1 AND b.idx = m.idx AND b.hash = m.hash `
	sqlSearchAll = `WITH m AS (` + searchHits + `) ` + searchBodies + `ORDER BY b.idx, b.checkpoint_id, b.hash`
	sqlSearch    = `WITH m AS MATERIALIZED (` + searchHits + `) ` + searchBodies + `
		WHERE m.idx <= (SELECT max(idx) FROM (SELECT idx FROM m ORDER BY idx LIMIT ?3))
		ORDER BY b.idx, b.checkpoint_id, b.hash LIMIT ?3`
	sqlBlobs = `SELECT hash, CAST(body AS BLOB) FROM graph_blobs WHERE thread_id = ?1 AND hash IN (SELECT value FROM json_each(?2))`
	// sqlHasBlob tells a put whether the thread holds a large blob it
	// carries again (a head snapshot's): binding and copying a 200 KB body
	// to have INSERT OR IGNORE drop it cost more than this lookup.
	sqlHasBlob = `SELECT 1 FROM graph_blobs WHERE thread_id = ? AND hash = ?`
	// sqlBodies reads messages and blobs in one statement (one snapshot):
	// blob rows have NULL for the message columns. Bodies runs it for
	// the messages sqlBodiesNear's stretch did not hold when they are more
	// than nearMisses (parsed at its first use). It probes the
	// keys from the lists (distinct: bodyHashes), which
	// drive the loops (CROSS JOIN): IN (SELECT …) built a temporary
	// index a list, and a new process's first load paid for its pages.
	sqlBodies = `SELECT m.hash, m.idx, CAST(m.body AS BLOB), m.checkpoint_id, m.created_at FROM json_each(?2) j
		CROSS JOIN graph_message_keys k ON k.thread_id = ?1 AND k.hash = j.value
		CROSS JOIN graph_message_bodies m ON m.thread_id = ?1 AND m.idx = k.idx AND m.hash = k.hash
		UNION ALL SELECT b.hash, NULL, CAST(b.body AS BLOB), NULL, NULL FROM json_each(?3) j
		CROSS JOIN graph_blobs b ON b.thread_id = ?1 AND b.hash = j.value`
	// sqlBodiesNear reads the messages as one stretch of
	// graph_message_bodies' key, from the lower to the higher index of
	// two of them (?4, ?5: the first and the last of the conversation a
	// rebuild reads), when it is shorter than ?6 rows, a row's body only
	// when its hash is one asked for (in ?2's JSON list); the blobs as
	// sqlBodies (one snapshot). Two lookups in graph_message_keys, not one a message: a
	// message's key is a random leaf of it, its body a neighbour of the
	// next message's (a new process's first load of an older checkpoint
	// paid a fault and a page's parse for each).
	sqlBodiesNear = `SELECT m.hash, m.idx, CASE WHEN instr(?2, '"' || m.hash || '"') THEN CAST(m.body AS BLOB) END, m.checkpoint_id, m.created_at
		FROM (SELECT min(idx) AS lo, max(idx) AS hi FROM graph_message_keys WHERE thread_id = ?1 AND hash IN (?4, ?5)) r
		CROSS JOIN graph_message_bodies m ON m.thread_id = ?1 AND m.idx BETWEEN r.lo AND r.hi
		WHERE r.hi - r.lo < ?6
		UNION ALL SELECT b.hash, NULL, CAST(b.body AS BLOB), NULL, NULL FROM json_each(?3) j
		CROSS JOIN graph_blobs b ON b.thread_id = ?1 AND b.hash = j.value`
	// sqlSize reads the running total (migrations[14]).
	sqlSize = `SELECT coalesce((SELECT bytes FROM graph_sizes WHERE thread_id = ?1), 0)`
	// sqlCountSize counts as memory.Store.Size does: octet_length of every text
	// (SQLite takes it from the record header, without loading the text),
	// the thread id once per row, 8 per number and time column.
	sqlCountSize = `SELECT
		(SELECT coalesce(sum(coalesce(octet_length(meta), 0) + octet_length(state) + coalesce(octet_length(rebased), 0) +
			coalesce((SELECT sum(octet_length(value)) FROM json_each(blob_refs)), 0)), 0) + count(*) * (octet_length(?1) + 5*8)
			FROM graph_checkpoints WHERE thread_id = ?1) +
		(SELECT coalesce(sum(octet_length(task_id) + octet_length(writes)), 0) + count(*) * (octet_length(?1) + 2*8)
			FROM graph_writes WHERE thread_id = ?1) +
		(SELECT coalesce(sum(octet_length(type) + octet_length(payload)), 0) + count(*) * (octet_length(?1) + 3*8)
			FROM graph_events WHERE thread_id = ?1) +
		(SELECT coalesce(sum(octet_length(hash) + octet_length(body)), 0) + count(*) * (octet_length(?1) + 3*8)
			FROM graph_message_bodies WHERE thread_id = ?1) +
		(SELECT coalesce(sum(octet_length(hash) + octet_length(body)), 0) + count(*) * (octet_length(?1) + 8)
			FROM graph_blobs WHERE thread_id = ?1) +
		(SELECT coalesce(sum(octet_length(operation_id) + octet_length(body)), 0) + count(*) * (octet_length(?1) + 8)
			FROM graph_drafts WHERE thread_id = ?1) +
		(SELECT count(*) * (octet_length(?1) + 2*8) FROM graph_epochs WHERE thread_id = ?1) +
		(SELECT coalesce(sum(octet_length(doc)), 0) + count(*) * (octet_length(?1) + 8) FROM graph_heads WHERE thread_id = ?1)`
	sqlWrites       = `SELECT checkpoint_id, task_id, writes, created_at FROM graph_writes WHERE thread_id = ? AND checkpoint_id = ? ORDER BY task_id`
	sqlThreadWrites = `SELECT checkpoint_id, task_id, writes, created_at FROM graph_writes WHERE thread_id = ? ORDER BY checkpoint_id, task_id`
	selectEvents    = `SELECT checkpoint_id, seq, type, payload, created_at FROM graph_events `
	sqlEvents       = selectEvents + `WHERE thread_id = ? AND checkpoint_id = ? ORDER BY seq`
	sqlThreadEvents = selectEvents + `WHERE thread_id = ? ORDER BY checkpoint_id, seq`
	sqlDraft        = `SELECT body, created_at FROM graph_drafts WHERE thread_id = ? AND operation_id = ?`
	sqlDrafts       = `SELECT operation_id, body, created_at FROM graph_drafts WHERE thread_id = ? ORDER BY operation_id`
	// BINARY collation: ordered bytewise, like Go strings.
	// Each with its newest listing, as sqlHistory reads it, kept in the
	// thread's row (migrations[12]): no checkpoint row is read.
	sqlThreads = `SELECT thread_id, checkpoints, latest_id, updated_at,
		latest_parent, latest_rerooted_from, latest_base, latest_meta, latest_blob_refs, latest_state
		FROM graph_threads ORDER BY thread_id`
	// A page of threads after (?1, ?2) in (updated_at, thread_id)
	// descending order, with how many come after it in all (the last
	// column: the page's count is taken from it). BINARY, SQLite's
	// default collation, compares ids bytewise. The page's ids are
	// picked first: sorting whole rows read every thread's newest
	// listing (15 ms against 3 at 8,936 threads).
	sqlRecentThreads = `SELECT thread_id, checkpoints, latest_id, updated_at,
		latest_parent, latest_rerooted_from, latest_base, latest_meta, latest_blob_refs, latest_state,
		(SELECT count(*) FROM graph_threads WHERE (updated_at, thread_id) < (?1, ?2))
		FROM graph_threads WHERE thread_id IN (SELECT thread_id FROM graph_threads
			WHERE (updated_at, thread_id) < (?1, ?2)
			ORDER BY updated_at DESC, thread_id DESC LIMIT ?3)
		ORDER BY updated_at DESC, thread_id DESC`
	sqlThreadUpdated = `SELECT updated_at FROM graph_threads WHERE thread_id = ?`
	// The thread's row (migrations[10], [12]): a put of a new checkpoint,
	// the newest (older ones are stale), counts it and makes it the
	// latest, with its listing (?8: its state when it has no meta).
	sqlPutThread = `INSERT INTO graph_threads (thread_id, checkpoints, latest_id, updated_at,
			latest_parent, latest_rerooted_from, latest_base, latest_meta, latest_blob_refs, latest_state)
		VALUES (?1, 1, ?2, ?3, ?4, NULL, ?5, ?6, ?7, ?8)
		ON CONFLICT (thread_id) DO UPDATE SET checkpoints = checkpoints + 1, latest_id = ?2, updated_at = ?3,
			latest_parent = ?4, latest_rerooted_from = NULL, latest_base = ?5, latest_meta = ?6, latest_blob_refs = ?7, latest_state = ?8`
	sqlPruneThread     = `UPDATE graph_threads SET checkpoints = checkpoints - ?2 WHERE thread_id = ?1`
	sqlDeleteThreadRow = `DELETE FROM graph_threads WHERE thread_id = ?`
)
