// Package floor is the least a program can do to keep on PostgreSQL what
// a rewind run stored: the same rows in the same commits, into plain
// tables (bytea, a primary key each, nothing else) of a schema of its own,
// each commit one round trip (a pipelined batch). `rewind bench` writes
// each turn's rows into it beside the store and prints a turn's time
// against the floor's (issue 31: a turn within 2× the floor).
package floor

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"rewind/store"
)

// Floor is one floor schema, written by one goroutine at a time.
type Floor struct {
	pool   *pgxpool.Pool
	schema string
	// qs are the statements, the schema's name in them.
	qs map[string]string
}

// The statements, %s the schema.
const (
	putCheckpoint = `INSERT INTO %s.checkpoints VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`
	putHead       = `INSERT INTO %s.heads VALUES ($1, $2, $3) ON CONFLICT (thread) DO UPDATE SET id = excluded.id, doc = excluded.doc`
	putMessage    = `INSERT INTO %s.messages VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`
	putBlob       = `INSERT INTO %s.blobs VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`
	putEvent      = `INSERT INTO %s.events VALUES ($1, $2, $3, $4, $5, $6)`
	settle        = `DELETE FROM %s.writes WHERE thread = $1 AND checkpoint = $2`
	putWrites     = `INSERT INTO %s.writes VALUES ($1, $2, $3, $4, $5) ON CONFLICT (thread, checkpoint, task) DO UPDATE SET writes = excluded.writes, epoch = excluded.epoch`
)

const tables = `
CREATE TABLE %[1]s.checkpoints (thread text NOT NULL, id bigint NOT NULL, parent bigint NOT NULL,
	meta bytea, state bytea NOT NULL, base boolean NOT NULL, refs text NOT NULL, epoch bigint NOT NULL,
	created timestamptz NOT NULL, PRIMARY KEY (thread, id));
CREATE TABLE %[1]s.heads (thread text PRIMARY KEY, id bigint NOT NULL, doc bytea NOT NULL);
CREATE TABLE %[1]s.messages (thread text NOT NULL, hash text NOT NULL, idx bigint NOT NULL,
	checkpoint bigint NOT NULL, body bytea NOT NULL, created timestamptz NOT NULL, PRIMARY KEY (thread, hash));
CREATE TABLE %[1]s.blobs (thread text NOT NULL, hash text NOT NULL, body bytea NOT NULL, PRIMARY KEY (thread, hash));
CREATE TABLE %[1]s.events (thread text NOT NULL, checkpoint bigint NOT NULL, seq int NOT NULL,
	type text NOT NULL, payload bytea NOT NULL, created timestamptz NOT NULL, PRIMARY KEY (thread, checkpoint, seq));
CREATE TABLE %[1]s.writes (thread text NOT NULL, checkpoint bigint NOT NULL, task text NOT NULL,
	writes bytea NOT NULL, epoch bigint NOT NULL, PRIMARY KEY (thread, checkpoint, task));`

// Create makes a new floor schema in pool's database; Remove drops it.
func Create(ctx context.Context, pool *pgxpool.Pool) (*Floor, error) {
	f := &Floor{pool: pool, schema: fmt.Sprintf("rewind_floor_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9), qs: map[string]string{}}
	for _, q := range []string{putCheckpoint, putHead, putMessage, putBlob, putEvent, settle, putWrites} {
		f.qs[q] = fmt.Sprintf(q, f.schema)
	}
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+f.schema+";"+fmt.Sprintf(tables, f.schema)); err != nil {
		return nil, fmt.Errorf("floor: create schema %s (the role needs CREATE on the database): %w", f.schema, err)
	}
	return f, nil
}

// Schema is the floor's schema.
func (f *Floor) Schema() string { return f.schema }

// Checkpoint commits a checkpoint row with its head snapshot, messages,
// blobs and events, and deletes the task writes it settles, in one
// transaction and one round trip, as a store's PutCheckpoint does.
func (f *Floor) Checkpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) error {
	b := &pgx.Batch{}
	b.Queue(f.qs[putCheckpoint], cp.ThreadID, cp.ID, cp.ParentID, cp.Meta, cp.State, cp.Base, strings.Join(cp.BlobRefs, " "), cp.Epoch, cp.CreatedAt)
	if cp.Head != nil {
		b.Queue(f.qs[putHead], cp.ThreadID, cp.ID, cp.Head)
	}
	for _, m := range cp.Messages {
		b.Queue(f.qs[putMessage], cp.ThreadID, m.Hash, m.Index, cp.ID, m.Body, cp.CreatedAt)
	}
	for _, bl := range cp.Blobs {
		b.Queue(f.qs[putBlob], cp.ThreadID, bl.Hash, bl.Body)
	}
	for _, ev := range events {
		b.Queue(f.qs[putEvent], cp.ThreadID, cp.ID, ev.Seq, ev.Type, ev.Payload, ev.CreatedAt)
	}
	if cp.Settles != 0 {
		b.Queue(f.qs[settle], cp.ThreadID, cp.Settles)
	}
	return f.send(ctx, b)
}

// Writes commits one task's writes in a transaction of their own, as a
// store's PutWrites does.
func (f *Floor) Writes(ctx context.Context, w store.TaskWrites) error {
	b := &pgx.Batch{}
	b.Queue(f.qs[putWrites], w.ThreadID, w.CheckpointID, w.TaskID, w.Writes, w.Epoch)
	return f.send(ctx, b)
}

// Sync does nothing: a commit is as durable as the server makes every
// commit (its synchronous_commit), the store's as well.
func (f *Floor) Sync() error { return nil }

// Remove drops the floor's schema.
func (f *Floor) Remove() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := f.pool.Exec(ctx, "DROP SCHEMA "+f.schema+" CASCADE"); err != nil {
		return fmt.Errorf("floor: drop schema %s: %w (drop it by hand)", f.schema, err)
	}
	return nil
}

// send runs a batch as one implicit transaction: pgx pipelines the
// statements with one Sync, so they commit together or not at all.
func (f *Floor) send(ctx context.Context, b *pgx.Batch) error {
	if err := f.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	return nil
}
