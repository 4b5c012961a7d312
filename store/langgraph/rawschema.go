package langgraph

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
)

// rawRewindVersion tells a rewind store from its file's bytes, without
// SQLite: its store schema version, when the file is whole on disk (WAL
// mode, no -wal or -shm beside it: no process has it open, the case the
// reader opens immutable) and its sqlite_schema lists a
// rewind_store_schema table holding a positive version. Anything else,
// or anything this reader does not follow, is ok false, and Detect asks
// SQLite as before. Asking SQLite parses the file's whole schema (rewind's
// FTS5 tables and triggers), and the store's opener parses it again on
// its own connection: 7.6% of the CPU of a new process loading a
// checkpoint went to the detection's parse (perf of rewind bench --load).
func rawRewindVersion(path string) (version int, ok bool) {
	if exists(path+"-wal") || exists(path+"-shm") {
		return 0, false // commits may wait in the WAL, or a process is writing
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	db, err := newRawDB(f)
	if err != nil {
		return 0, false
	}
	root, err := db.tableRoot("rewind_store_schema")
	if err != nil || root == 0 {
		return 0, false
	}
	v, err := db.maxInt(root)
	if err != nil || v <= 0 || v > math.MaxInt32 {
		return 0, false
	}
	return int(v), true
}

// errRaw is any file rawDB does not follow; the caller asks SQLite.
var errRaw = errors.New("not read")

// rawDB reads table b-trees of a SQLite file (the file format,
// sqlite.org/fileformat.html), bounded so a damaged file ends in errRaw.
type rawDB struct {
	f        io.ReaderAt
	pageSize int // bytes a page
	usable   int // a page less its reserved bytes
	pages    uint32
	visited  int // pages read, against a loop in a damaged file
}

// maxPagesRead bounds the pages one detection reads.
const maxPagesRead = 4096

func newRawDB(f *os.File) (*rawDB, error) {
	var h [100]byte
	if _, err := f.ReadAt(h[:], 0); err != nil {
		return nil, errRaw
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, errRaw
	}
	if string(h[:16]) != "SQLite format 3\x00" || h[18] != 2 || h[19] != 2 { // 2: WAL
		return nil, errRaw
	}
	ps := int(binary.BigEndian.Uint16(h[16:18]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps&(ps-1) != 0 || binary.BigEndian.Uint32(h[56:60]) != 1 { // 1: UTF-8
		return nil, errRaw
	}
	usable := ps - int(h[20])
	if usable < 480 || fi.Size() < int64(ps) {
		return nil, errRaw
	}
	return &rawDB{f: f, pageSize: ps, usable: usable, pages: uint32(fi.Size() / int64(ps))}, nil
}

// page reads page n (from 1) and says where its b-tree header starts.
func (db *rawDB) page(n uint32) ([]byte, int, error) {
	db.visited++
	if n == 0 || n > db.pages || db.visited > maxPagesRead {
		return nil, 0, errRaw
	}
	b := make([]byte, db.pageSize)
	if _, err := db.f.ReadAt(b, int64(n-1)*int64(db.pageSize)); err != nil {
		return nil, 0, errRaw
	}
	if n == 1 {
		return b, 100, nil // after the file's header
	}
	return b, 0, nil
}

// walk calls row with the local part of every row's record in the table
// b-tree rooted at page n, in order.
func (db *rawDB) walk(n uint32, depth int, row func(rec []byte) error) error {
	if depth > 20 {
		return errRaw
	}
	b, off, err := db.page(n)
	if err != nil {
		return err
	}
	if off+12 > len(b) {
		return errRaw
	}
	kind, cells := b[off], int(binary.BigEndian.Uint16(b[off+3:]))
	switch kind {
	case 0x05: // interior: a left child a cell, then the rightmost
		ptrs := off + 12
		for i := range cells {
			c, err := cell(b, ptrs, i)
			if err != nil || c+4 > len(b) {
				return errRaw
			}
			if err := db.walk(binary.BigEndian.Uint32(b[c:]), depth+1, row); err != nil {
				return err
			}
		}
		return db.walk(binary.BigEndian.Uint32(b[off+8:]), depth+1, row)
	case 0x0d: // leaf: payload size, rowid, payload
		for i := range cells {
			rec, err := db.leafRecord(b, off+8, i)
			if err != nil {
				return err
			}
			if err := row(rec); err != nil {
				return err
			}
		}
		return nil
	}
	return errRaw
}

// cell is the offset of cell i, whose pointer array starts at ptrs.
func cell(b []byte, ptrs, i int) (int, error) {
	p := ptrs + 2*i
	if p+2 > len(b) {
		return 0, errRaw
	}
	return int(binary.BigEndian.Uint16(b[p:])), nil
}

// leafRecord is the part of leaf cell i's record on its page (the rest,
// if any, is on overflow pages this reader does not follow).
func (db *rawDB) leafRecord(b []byte, ptrs, i int) ([]byte, error) {
	c, err := cell(b, ptrs, i)
	if err != nil || c >= len(b) {
		return nil, errRaw
	}
	size, n := varint(b[c:])
	if n == 0 {
		return nil, errRaw
	}
	_, m := varint(b[c+n:]) // the rowid
	if m == 0 {
		return nil, errRaw
	}
	start := c + n + m
	local := db.localSize(size)
	if size < 0 || start+local > len(b) {
		return nil, errRaw
	}
	return b[start : start+local], nil
}

// localSize is how much of a payload of p bytes a table leaf keeps on
// its page (the file format's U, X, M and K).
func (db *rawDB) localSize(p int64) int {
	u := int64(db.usable)
	x := u - 35
	if p <= x {
		return int(p)
	}
	m := (u-12)*32/255 - 23
	k := m + (p-m)%(u-4)
	if k <= x {
		return int(k)
	}
	return int(m)
}

// tableRoot is the root page of the table named name, 0 when there is
// none.
func (db *rawDB) tableRoot(name string) (uint32, error) {
	var root uint32
	err := db.walk(1, 0, func(rec []byte) error {
		cols, err := columns(rec, 4) // type, name, tbl_name, rootpage
		if err != nil {
			return err
		}
		if string(cols[0].text) == "table" && string(cols[1].text) == name {
			if !cols[3].isInt || cols[3].i <= 0 || cols[3].i > math.MaxUint32 {
				return errRaw
			}
			root = uint32(cols[3].i)
		}
		return nil
	})
	return root, err
}

// maxInt is the largest first column of the table rooted at root, all
// integers; 0 for no rows.
func (db *rawDB) maxInt(root uint32) (int64, error) {
	var top int64
	err := db.walk(root, 0, func(rec []byte) error {
		cols, err := columns(rec, 1)
		if err != nil || !cols[0].isInt {
			return errRaw
		}
		top = max(top, cols[0].i)
		return nil
	})
	return top, err
}

// value is a record's column: text, or an integer.
type value struct {
	text  []byte
	i     int64
	isInt bool
}

// columns decodes the first n columns of a record, which must be on its
// page, and text or integers.
func columns(rec []byte, n int) ([]value, error) {
	hlen, k := varint(rec)
	if k == 0 || hlen > int64(len(rec)) || hlen < int64(k) {
		return nil, errRaw
	}
	head, body := rec[k:hlen], rec[hlen:]
	out := make([]value, 0, n)
	for len(out) < n {
		t, k := varint(head)
		if k == 0 {
			return nil, errRaw
		}
		head = head[k:]
		v, size, err := column(t, body)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		body = body[size:]
	}
	return out, nil
}

// column reads one column of serial type t from the start of body, and
// says how many bytes it took.
func column(t int64, body []byte) (value, int, error) {
	switch {
	case t == 8 || t == 9: // the integers 0 and 1
		return value{i: t - 8, isInt: true}, 0, nil
	case t >= 1 && t <= 6:
		size := [...]int{1, 2, 3, 4, 6, 8}[t-1]
		if size > len(body) {
			return value{}, 0, errRaw
		}
		var i int64
		for _, c := range body[:size] {
			i = i<<8 | int64(c)
		}
		if shift := 64 - 8*size; shift > 0 { // sign-extend
			i = i << shift >> shift
		}
		return value{i: i, isInt: true}, size, nil
	case t >= 13 && t%2 == 1: // text
		size := (t - 13) / 2
		if size > int64(len(body)) {
			return value{}, 0, errRaw
		}
		return value{text: body[:size]}, int(size), nil
	}
	return value{}, 0, errRaw // NULL, a float or a blob: not a column read here
}

// varint decodes SQLite's big-endian varint; 0 bytes read when b ends
// first.
func varint(b []byte) (int64, int) {
	var v uint64
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return int64(v<<8 | uint64(b[i])), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return int64(v), i + 1
		}
	}
	return 0, 0
}
