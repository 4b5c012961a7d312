// Package floor is the least a program can do to keep on SQLite what a
// rewind run stored: the same rows in the same commits, into plain tables
// with a primary key each and nothing else (no listing index, no search
// index, no size totals, no checks), made durable as the store makes
// them. `rewind bench` writes each turn's rows into a floor file beside
// its store and prints a turn's time against the floor's (issue 31: a
// turn within 2× the floor).
package floor

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // the driver the store uses

	"rewind/store"
)

const schema = `
CREATE TABLE checkpoints (thread TEXT NOT NULL, id INTEGER NOT NULL, parent INTEGER NOT NULL,
	meta BLOB, state BLOB NOT NULL, base INTEGER NOT NULL, refs TEXT NOT NULL, epoch INTEGER NOT NULL,
	created INTEGER NOT NULL, PRIMARY KEY (thread, id));
CREATE TABLE heads (thread TEXT NOT NULL PRIMARY KEY, id INTEGER NOT NULL, doc BLOB NOT NULL);
CREATE TABLE messages (thread TEXT NOT NULL, hash TEXT NOT NULL, idx INTEGER NOT NULL,
	checkpoint INTEGER NOT NULL, body BLOB NOT NULL, created INTEGER NOT NULL, PRIMARY KEY (thread, hash));
CREATE TABLE blobs (thread TEXT NOT NULL, hash TEXT NOT NULL, body BLOB NOT NULL, PRIMARY KEY (thread, hash));
CREATE TABLE events (thread TEXT NOT NULL, checkpoint INTEGER NOT NULL, seq INTEGER NOT NULL,
	type TEXT NOT NULL, payload BLOB NOT NULL, created INTEGER NOT NULL, PRIMARY KEY (thread, checkpoint, seq));
CREATE TABLE writes (thread TEXT NOT NULL, checkpoint INTEGER NOT NULL, task TEXT NOT NULL,
	writes BLOB NOT NULL, epoch INTEGER NOT NULL, PRIMARY KEY (thread, checkpoint, task));`

// Floor is one floor file, written by one goroutine at a time.
type Floor struct {
	db      *sql.DB
	path    string
	durable bool
	// dirSynced: the directory was fsynced once, as the store does.
	dirSynced bool
	stmts     map[string]*sql.Stmt
}

// The statements a checkpoint's and a task's commits run.
const (
	putCheckpoint = `INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	putHead       = `INSERT INTO heads VALUES (?, ?, ?) ON CONFLICT (thread) DO UPDATE SET id = excluded.id, doc = excluded.doc`
	putMessage    = `INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	putBlob       = `INSERT INTO blobs VALUES (?, ?, ?) ON CONFLICT DO NOTHING`
	putEvent      = `INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)`
	settle        = `DELETE FROM writes WHERE thread = ? AND checkpoint = ?`
	putWrites     = `INSERT INTO writes VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET writes = excluded.writes, epoch = excluded.epoch`
)

// Create makes a new floor file at path (it must not exist). durable:
// what a turn commits is fsynced when the turn ends (Sync), as the store's
// default (sqlite.SyncFull) fsyncs a run's commits when it releases the
// thread; otherwise nothing is fsynced (sqlite.SyncNormal).
func Create(ctx context.Context, path string, durable bool) (*Floor, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("floor: %s exists: give a new file", path)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, fmt.Errorf("floor: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	f := &Floor{db: db, path: path, durable: durable, stmts: map[string]*sql.Stmt{}}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		f.Close()
		return nil, fmt.Errorf("floor: create %s: %w", path, err)
	}
	for _, q := range []string{putCheckpoint, putHead, putMessage, putBlob, putEvent, settle, putWrites} {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("floor: prepare: %w", err)
		}
		f.stmts[q] = st
	}
	return f, nil
}

// Path is the floor file's path.
func (f *Floor) Path() string { return f.path }

// Checkpoint commits a checkpoint row with its head snapshot, messages,
// blobs and events in one transaction, and deletes the task writes it
// settles, as a store's PutCheckpoint does.
func (f *Floor) Checkpoint(ctx context.Context, cp store.Checkpoint, events []store.Event) error {
	return f.commit(ctx, func(tx *sql.Tx) error {
		if err := f.exec(ctx, tx, putCheckpoint, cp.ThreadID, cp.ID, cp.ParentID, cp.Meta, cp.State, cp.Base, strings.Join(cp.BlobRefs, " "), cp.Epoch, cp.CreatedAt.UnixMicro()); err != nil {
			return err
		}
		if cp.Head != nil {
			if err := f.exec(ctx, tx, putHead, cp.ThreadID, cp.ID, cp.Head); err != nil {
				return err
			}
		}
		for _, m := range cp.Messages {
			if err := f.exec(ctx, tx, putMessage, cp.ThreadID, m.Hash, m.Index, cp.ID, m.Body, cp.CreatedAt.UnixMicro()); err != nil {
				return err
			}
		}
		for _, b := range cp.Blobs {
			if err := f.exec(ctx, tx, putBlob, cp.ThreadID, b.Hash, b.Body); err != nil {
				return err
			}
		}
		for _, ev := range events {
			if err := f.exec(ctx, tx, putEvent, cp.ThreadID, cp.ID, ev.Seq, ev.Type, ev.Payload, ev.CreatedAt.UnixMicro()); err != nil {
				return err
			}
		}
		if cp.Settles != 0 {
			return f.exec(ctx, tx, settle, cp.ThreadID, cp.Settles)
		}
		return nil
	})
}

// Writes commits one task's writes in a transaction of their own, as a
// store's PutWrites does.
func (f *Floor) Writes(ctx context.Context, w store.TaskWrites) error {
	return f.commit(ctx, func(tx *sql.Tx) error {
		return f.exec(ctx, tx, putWrites, w.ThreadID, w.CheckpointID, w.TaskID, w.Writes, w.Epoch)
	})
}

// Sync makes what was committed durable, when the floor is: one fsync of
// the WAL (and, the first time, of the directory), what the store does
// when a run releases its thread.
func (f *Floor) Sync() error {
	if !f.durable {
		return nil
	}
	paths := []string{f.path + "-wal"}
	if !f.dirSynced {
		paths = append(paths, filepath.Dir(f.path))
	}
	for _, p := range paths {
		h, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("floor: fsync %s: %w", p, err)
		}
		err = h.Sync()
		h.Close()
		if err != nil {
			return fmt.Errorf("floor: fsync %s: %w", p, err)
		}
	}
	f.dirSynced = true
	return nil
}

// Close closes the file (it stays: Remove deletes it).
func (f *Floor) Close() error {
	for _, st := range f.stmts {
		st.Close()
	}
	return f.db.Close()
}

// Remove closes the floor and deletes its files.
func (f *Floor) Remove() error {
	err := f.Close()
	for _, p := range []string{f.path, f.path + "-wal", f.path + "-shm"} {
		if rm := os.Remove(p); rm != nil && !errors.Is(rm, os.ErrNotExist) && err == nil {
			err = fmt.Errorf("floor: %w", rm)
		}
	}
	return err
}

func (f *Floor) commit(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("floor: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("floor: commit: %w", err)
	}
	return nil
}

func (f *Floor) exec(ctx context.Context, tx *sql.Tx, q string, args ...any) error {
	st := tx.StmtContext(ctx, f.stmts[q])
	defer st.Close()
	if _, err := st.ExecContext(ctx, args...); err != nil {
		return fmt.Errorf("floor: %s: %w", strings.Fields(q)[2], err)
	}
	return nil
}
