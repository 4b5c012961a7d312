package langgraph

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Handles lets a test try to write through a source's own connections.
func Handles(s Source) (*sql.DB, *pgxpool.Pool) {
	switch db := s.(*reader).db.(type) {
	case *sqliteDB:
		h, _ := db.handle()
		return h, nil
	case *pgDB:
		return nil, db.pool
	}
	return nil, nil
}

// MaxItems is how many values a stored value may hold.
const MaxItems = maxItems

// TaskNames names the tasks of checkpoint id's writes by their ids alone
// (taskids.go), as LangGraph computed them.
func TaskNames(ctx context.Context, s Source, c Chain, id string) (map[string]string, error) {
	snap, err := s.(*reader).db.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer snap.done()
	rw, err := one(ctx, snap, c, id, false)
	if err != nil {
		return nil, err
	}
	ws, err := snap.writes(ctx, c, rw.id, rw.id, false)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	due := rw.doc.next(false)
	for _, w := range ws {
		if w.task != NullTask {
			out[w.task] = siteOf(c, rw).name(w.task, due)
		}
	}
	return out, nil
}

// SnapshotSetting is the server setting name as a snapshot of s sees it.
func SnapshotSetting(ctx context.Context, s Source, name string) (string, error) {
	snap, err := s.(*reader).db.snapshot(ctx)
	if err != nil {
		return "", err
	}
	defer snap.done()
	var v string
	err = snap.(*pgSnap).tx.QueryRow(ctx, "select current_setting($1)", name).Scan(&v)
	return v, err
}

// Reads counts what a source's snapshots read of a chain's checkpoints.
type Reads struct {
	WithMeta int            // rows read with their metadata
	Lean     map[string]int // rows read lean (a delta walk's), by id
	Parents  int            // reads of every parent link
	Writes   int            // reads of the writes of a range of checkpoints
}

// Counted is s reading through snapshots that count into the Reads it
// returns.
func Counted(s Source) (Source, *Reads) {
	n := &Reads{Lean: map[string]int{}}
	return &reader{db: countingDB{database: s.(*reader).db, n: n}}, n
}

type countingDB struct {
	database
	n *Reads
}

func (d countingDB) snapshot(ctx context.Context) (snapshot, error) {
	s, err := d.database.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return countingSnap{snapshot: s, n: d.n}, nil
}

type countingSnap struct {
	snapshot
	n *Reads
}

func (s countingSnap) checkpoints(ctx context.Context, c Chain, q rowQuery) ([]row, error) {
	rows, err := s.snapshot.checkpoints(ctx, c, q)
	for _, r := range rows {
		if q.lean {
			s.n.Lean[r.id]++
		} else {
			s.n.WithMeta++
		}
	}
	return rows, err
}

func (s countingSnap) parents(ctx context.Context, c Chain) (map[string]string, error) {
	s.n.Parents++
	return s.snapshot.parents(ctx, c)
}

func (s countingSnap) writes(ctx context.Context, c Chain, from, to string, values bool) ([]writeRow, error) {
	s.n.Writes++
	return s.snapshot.writes(ctx, c, from, to, values)
}

// RawRewindVersion is a rewind store's schema version read from its
// file's bytes (rawschema.go); ok false when that reader does not tell.
var RawRewindVersion = rawRewindVersion
