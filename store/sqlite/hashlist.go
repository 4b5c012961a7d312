package sqlite

import (
	"database/sql"
	"encoding/json"
)

// The hash lists a load reads and writes (blob_refs, the hashes Bodies
// gives json_each) are written and read by hand when every hash is plain
// (what rewind's hashes are: hex digits), as encoding/json's Marshal and
// Unmarshal would: their first use in a new process was a twentieth of
// an older checkpoint's load. Anything else goes through encoding/json.

// plainHash says whether s needs no escape in a JSON string, as
// encoding/json writes it (letters, digits, - _ . : only).
func plainHash(s []byte) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// appendHashes appends hashes as json.Marshal writes them; not ok when
// one is not plain.
func appendHashes(dst []byte, hashes []string) ([]byte, bool) {
	dst = append(dst, '[')
	for i, h := range hashes {
		if !plainHash([]byte(h)) {
			return nil, false
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(append(append(dst, '"'), h...), '"')
	}
	return append(dst, ']'), true
}

// marshalHashes is json.Marshal(hashes).
func marshalHashes(hashes []string) ([]byte, error) {
	if hashes == nil {
		return []byte("null"), nil
	}
	n := 2
	for _, h := range hashes {
		n += len(h) + 3
	}
	if b, ok := appendHashes(make([]byte, 0, n), hashes); ok {
		return b, nil
	}
	return json.Marshal(hashes)
}

// readHashes is json.Unmarshal of a list of hashes as marshalHashes
// writes them (no white space, every hash plain) into *out; any other
// JSON goes to encoding/json.
func readHashes(b []byte, out *[]string) error {
	if hs, ok := plainHashes(b); ok {
		*out = hs
		return nil
	}
	return json.Unmarshal(b, out)
}

func plainHashes(b []byte) ([]string, bool) {
	if len(b) < 2 || b[0] != '[' || b[len(b)-1] != ']' {
		return nil, false
	}
	hs := []string{}
	for rest := b[1 : len(b)-1]; len(rest) > 0; {
		if rest[0] != '"' {
			return nil, false
		}
		end := 1
		for end < len(rest) && rest[end] != '"' {
			end++
		}
		if end == len(rest) || !plainHash(rest[1:end]) {
			return nil, false
		}
		hs = append(hs, string(rest[1:end]))
		switch rest = rest[end+1:]; {
		case len(rest) == 0:
		case rest[0] == ',' && len(rest) > 1:
			rest = rest[1:]
		default:
			return nil, false
		}
	}
	return hs, true
}

// blobRefs is the blob_refs column: a JSON array, NULL when empty.
func blobRefs(refs []string) (sql.NullString, error) {
	if len(refs) == 0 {
		return sql.NullString{}, nil
	}
	b, err := marshalHashes(refs)
	return sql.NullString{String: string(b), Valid: true}, err
}

// hashList is a JSON array of hashes for json_each, as text (SQLite reads a
// blob as JSONB): [] rather than null.
func hashList(hashes []string) (string, error) {
	if hashes == nil {
		hashes = []string{}
	}
	b, err := marshalHashes(hashes)
	return string(b), err
}
