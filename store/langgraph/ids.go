package langgraph

import (
	"encoding/hex"
	"strings"
	"time"
)

// gregorian is the epoch of UUID timestamps, in Unix nanoseconds / 100.
const gregorianOffset = 122192928000000000

// idTime reads the time in a checkpoint id. LangGraph's ids are UUIDv6
// (time-ordered, so their text sorts as they were made): the time comes
// without reading the checkpoint. The zero time for any other id.
func idTime(id string) time.Time {
	h := strings.ReplaceAll(id, "-", "")
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != 16 || b[6]>>4 != 6 {
		return time.Time{}
	}
	hi := uint64(b[0])<<40 | uint64(b[1])<<32 | uint64(b[2])<<24 | uint64(b[3])<<16 | uint64(b[4])<<8 | uint64(b[5])
	ticks := hi<<12 | uint64(b[6]&0x0f)<<8 | uint64(b[7])
	if ticks < gregorianOffset {
		return time.Time{}
	}
	return time.Unix(0, int64(ticks-gregorianOffset)*100).UTC()
}

// parseTS reads a checkpoint's "ts" (Python isoformat, JS toISOString).
func parseTS(s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999-07:00", "2006-01-02T15:04:05.999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// NullTask is the task id LangGraph gives writes that no task made (the
// resume values of a Command).
const NullTask = "00000000-0000-0000-0000-000000000000"
