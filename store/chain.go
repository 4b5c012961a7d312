package store

// WalkChain follows the parents from id through rows, newest first (one
// range of a thread's checkpoints at or below id, as a store reads them
// in one statement), to the first row that reads on its own (a base, a
// rebase, the head snapshot, a root): the chain Chain returns. ok is
// false when a parent is not among the rows (the branch forks before the
// range): the store then walks the parents itself. The chain is made in
// rows' own array, and the rows left out are cleared so that they keep
// no state alive.
func WalkChain(rows []Checkpoint, id int64) ([]Checkpoint, bool) {
	out := rows[:0] // in place: a kept row never moves up past one not read yet
	want := id
	for _, r := range rows { // ids fall: a parent comes after its child
		if r.ID != want {
			continue // another branch's
		}
		out = append(out, r)
		if r.Base || r.Rebased != nil || r.Head != nil || r.ParentID == 0 {
			clear(rows[len(out):])
			return out, true
		}
		want = r.ParentID
	}
	return nil, false
}
