package chainformat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
)

// Hooks are the format's seams for tests, of the engine and of the
// format (engine's export_test.go names them again): knobs that change
// how rows are written and read, and checks that the hand readers agree
// with encoding/json on what a test stored. Nothing but tests calls them.
var Hooks hooks

type hooks struct{}

// SetBaseEvery makes every nth checkpoint of a branch a base, for tests
// that want short and long delta chains; it returns the undo.
func (hooks) SetBaseEvery(n int) func() {
	old := baseEvery
	baseEvery = n
	return func() { baseEvery = old }
}

// Tune sets s's base interval (0: the package's) and whether its
// rebuilds replay every write, for s alone: tests that tune a schema of
// their own run beside others.
func (hooks) Tune(s *Schema, baseEvery int, replayAll bool) {
	s.baseEvery, s.replayAll = baseEvery, replayAll
}

// ListingWithoutTokens rewrites a stored listing as the release before
// tokens wrote it: an object with source, status, nodes and calls spelled
// out, and no tokens.
func (hooks) ListingWithoutTokens(meta []byte) ([]byte, error) {
	var l listing
	if err := json.Unmarshal(meta, &l); err != nil {
		return nil, err
	}
	l = l.fill()
	l.Tokens, l.OldTokens = nil, nil
	return json.Marshal(listingObject(l))
}

// ListingReadersAgree is ReadersAgree on a listing alone: a test that
// breaks one document of a row checks that one, not its intact partner
// again.
func (hooks) ListingReadersAgree(meta []byte) (diff string, fast bool) {
	parts := []listPart{listWhole, listCore, listBrief}
	var read [3]listing
	var ok [3]bool
	fast = true
	for i, part := range parts {
		ok[i] = readListing(meta, &read[i], part)
		fast = fast && ok[i]
	}
	if ok == [3]bool{} {
		return "", false // nothing read by hand to compare
	}
	var whole listing // encoding/json's reading, once: each part masks a copy
	err := json.Unmarshal(meta, &whole)
	for i, part := range parts {
		a, ok := read[i], ok[i]
		b := whole
		switch part {
		case listCore:
			b = listing{SchemaVersion: b.SchemaVersion, Depth: b.Depth, format: b.format, Events: b.Events}
		case listBrief:
			b = b.briefed()
			sortRoles(&a.brief)
		}
		if ok && (err != nil || !reflect.DeepEqual(a, b)) {
			return fmt.Sprintf("listing (part %d): read %+v, encoding/json %+v (%v)", part, a, b, err), fast
		}
	}
	return "", fast
}

// ReadersAgree decodes a stored row's listing and state document with the
// hand readers (storedoc.go) and with encoding/json, whole and as a
// replay reads them, and says how they differ ("" when they agree). fast
// says whether the hand readers read both documents (rather than giving
// up on them, which leaves them to encoding/json).
// A nil meta checks the state document alone (a rebased one).
func (hooks) ReadersAgree(meta, state []byte) (diff string, fast bool) {
	fast = true
	if meta != nil {
		if diff, fast = Hooks.ListingReadersAgree(meta); diff != "" {
			return diff, fast
		}
	}
	var a, b stateDoc
	ok := readStateDoc(state, &a, false, nil)
	err := json.Unmarshal(state, &b)
	fast = fast && ok
	if ok && (err != nil || !reflect.DeepEqual(a, b)) {
		return fmt.Sprintf("state: read %+v, encoding/json %+v (%v)", a, b, err), fast
	}
	for _, g := range b.Groups {
		for _, w := range g.Writes {
			op, ok := readOp(w.Value) // a transcript op, if it is one
			fast = fast && (ok || !bytes.HasPrefix(w.Value, []byte(`{"$m`)))
			if !ok {
				continue // left to encoding/json: nothing to compare
			}
			if want, err := parseOpSlow(w.Value); err != nil || !reflect.DeepEqual(op, want) {
				return fmt.Sprintf("transcript op %s: read %+v, encoding/json %+v (%v)", w.Value, op, want, err), fast
			}
		}
	}
	var c stateDoc
	var tasks json.RawMessage
	if ok = readStateDoc(state, &c, true, &tasks); !ok {
		return "", false // left to encoding/json: nothing to compare
	}
	var d coreDoc
	err = json.Unmarshal(state, &d)
	if got := (coreDoc{Format: c.Format, Tasks: tasks, Groups: c.Groups, Values: c.Values}); err != nil || !reflect.DeepEqual(got, d) {
		return fmt.Sprintf("state (core): read %+v, encoding/json %+v (%v)", got, d, err), fast
	}
	return "", fast
}

// ReadAnyAgrees decodes b with the hand reader and with a json.Decoder
// (UseNumber), and says how they differ ("" when they agree); fast says
// whether the hand reader read it.
func (hooks) ReadAnyAgrees(b []byte) (diff string, fast bool) {
	a, ok := readAny(b)
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var want any
	err := d.Decode(&want)
	if err == nil && d.More() {
		err = errors.New("more after the value")
	}
	if _, tail := d.Token(); err == nil && tail != io.EOF {
		err = errors.New("more after the value")
	}
	if ok && (err != nil || !reflect.DeepEqual(a, want)) {
		return fmt.Sprintf("read %#v, encoding/json %#v (%v)", a, want, err), ok
	}
	return "", ok
}

// FastValuesAgree runs the fast form and the encoding/json form of the
// replay's value functions (fastvalues.go) on the same input and says how
// they differ ("" when they agree); fast says whether the fast form took
// it. what names the function: "merge", "unpatch", "replace", "members",
// "unzip", "unblob" (JSON values compared; bytes too when b is as
// json.Marshal writes it), "counter", "compact".
func (hooks) FastValuesAgree(what string, a, b []byte, blobs map[string]json.RawMessage) (diff string, fast bool) {
	same := func(x, y []byte, err error) string {
		if err != nil || !bytes.Equal(x, y) {
			return fmt.Sprintf("fast %s, encoding/json %s (%v)", x, y, err)
		}
		return ""
	}
	switch what {
	case "merge":
		x, ok := mergeMap(a, b)
		y, err := mergeMapSlow(a, b)
		if ok {
			return same(x, y, err), true
		}
	case "unpatch":
		x, ok := unpatchObjectFast(a, b)
		y, err := unpatchObjectSlow(a, b)
		if ok {
			return same(x, y, err), true
		}
	case "replace":
		x, found, ok := readReplace(a)
		y, want := isReplaceSlow(a)
		if ok {
			if found != want || !bytes.Equal(x, y) {
				return fmt.Sprintf("fast %s %v, encoding/json %s %v", x, found, y, want), true
			}
			return "", true
		}
	case "members":
		x, ok := objectMembers(a)
		y, err := objectFieldsSlow(a)
		if ok {
			if err != nil || !reflect.DeepEqual(x, y) {
				return fmt.Sprintf("fast %q, encoding/json %q (%v)", x, y, err), true
			}
			return "", true
		}
	case "unzip":
		x, ok := unzipFast(a)
		y, err := unzipSlow(a)
		if ok {
			return same(x, y, err), true
		}
	case "unblob":
		x, ok, _ := unblobFast(a, &blobSet{bodies: blobs})
		y, err := unblobSlow(a, &blobSet{bodies: blobs})
		if ok {
			var vx, vy any
			if err != nil || json.Unmarshal(x, &vx) != nil || json.Unmarshal(y, &vy) != nil || !reflect.DeepEqual(vx, vy) {
				return fmt.Sprintf("fast %s, encoding/json %s (%v)", x, y, err), true
			}
			if va, err := decodeAny(a); err == nil {
				if canon, _ := json.Marshal(va); !bytes.Equal(canon, a) {
					return "", true // as PostgreSQL gives it: the same value will do
				}
			}
			return same(x, y, nil), true // as SQLite gives it: the same bytes
		}
	case "counter":
		x, okx := smallInt(a)
		y, oky := smallInt(b)
		if okx && oky {
			var fx, fy float64
			if json.Unmarshal(a, &fx) != nil || json.Unmarshal(b, &fy) != nil {
				return fmt.Sprintf("%s or %s is not a number", a, b), true
			}
			want, _ := json.Marshal(fx + fy)
			return same(strconv.AppendInt(nil, x+y, 10), want, nil), true
		}
	case "compact":
		var buf bytes.Buffer
		if json.Compact(&buf, a) != nil {
			return "", false
		}
		var esc bytes.Buffer
		json.HTMLEscape(&esc, buf.Bytes())
		return same(appendCompact(nil, a), esc.Bytes(), nil), true
	}
	return "", false
}

// ZipBlob is the body a blob is stored with.
func (hooks) ZipBlob(body []byte) []byte { return zipBlob(body) }

// KeyedApplyAgrees replays a stored write to a keyed channel (key "id")
// holding current, by the fast form and by encoding/json, and says how the
// lists and the writes they give back differ ("" when they agree); fast
// says whether the fast form took it.
func (hooks) KeyedApplyAgrees(current, stored []byte) (diff string, fast bool) {
	ups, ok := readUpserts(stored)
	if !ok {
		return "", false
	}
	a, errA := newKeyedList(current, "id")
	b, errB := newKeyedList(current, "id")
	if errA != nil || errB != nil {
		return "", false
	}
	x, errX := a.upsert(ups, true)
	y, errY := b.applySlow(stored, true)
	va, _ := a.value()
	vb, _ := b.value()
	if (errX == nil) != (errY == nil) || !bytes.Equal(x, y) || !bytes.Equal(va, vb) {
		return fmt.Sprintf("fast %s → %s (%v), encoding/json %s → %s (%v)", x, va, errX, y, vb, errY), true
	}
	return "", true
}

// PatchWrite is the stored form of an upsert write to a keyed channel
// (key "id") holding current.
func (hooks) PatchWrite(current, write []byte) []byte {
	return patchWrite(indexItems(current, "id"), write, "id")
}

// CheckStateJSON makes every state document written be checked against
// json.Marshal (tests turn it on).
func (hooks) CheckStateJSON() { checkStateJSON = true }

// SkipString reads the JSON string at the start of b: where it ends, and
// whether it is one.
func (hooks) SkipString(b []byte) (int, bool) {
	r := rd{b: b}
	ok := r.skipString()
	return r.i, ok
}

// ListingWithoutSums is a stored listing without running totals, as the
// release before them wrote it.
func (hooks) ListingWithoutSums(meta []byte) ([]byte, error) {
	var l listing
	if err := json.Unmarshal(meta, &l); err != nil {
		return nil, err
	}
	l.SumTurns, l.SumThread, l.SumBranch = 0, nil, nil
	return l.MarshalJSON()
}

// sortRoles sorts the roles read by hand, in the order stored, as
// briefed sorts a map's keys.
func sortRoles(b *briefCounts) {
	for _, s := range []*roleSum{&b.calls, &b.tokens, &b.oldTokens} {
		slices.Sort(s.roles)
	}
}
