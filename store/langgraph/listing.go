package langgraph

import "strings"

// row is one checkpoints row, read by either backend.
type row struct {
	id, parent string
	meta       meta
	doc        *doc
}

// listing builds a row's listing; counts are its writes' (countWrites).
func (r row) listing(c Chain, counts Counts, args bool) Listing {
	l := Listing{
		Chain:     c,
		ID:        r.id,
		Parent:    r.parent,
		Step:      r.meta.step,
		Source:    r.meta.source,
		CreatedAt: r.doc.ts,
		Next:      r.doc.next(args),
		WrittenBy: r.meta.writtenBy,
		Counts:    counts,
	}
	if l.CreatedAt.IsZero() {
		l.CreatedAt = idTime(r.id)
	}
	for _, t := range l.Next {
		if t.Send {
			l.Counts.Sends++
		}
	}
	l.Counts.Channels = r.doc.stateChannels() + r.unheldDeltas()
	damaged := r.doc.bad
	if r.meta.damaged != "" {
		damaged = append(damaged[:len(damaged):len(damaged)], r.meta.damaged)
	}
	l.Damaged = strings.Join(damaged, "; ")
	return l
}

// checkpoint builds the whole checkpoint of a row read in full.
func (r row) checkpoint(c Chain, counts Counts) Checkpoint {
	return Checkpoint{
		Listing:  r.listing(c, counts, true),
		Format:   r.doc.format,
		Channels: r.doc.channels(),
		Metadata: r.meta.all,
	}
}
