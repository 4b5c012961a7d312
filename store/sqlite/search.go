package sqlite

import (
	"context"
	"database/sql/driver"
	"strings"

	"modernc.org/sqlite"

	"rewind/store"
	"rewind/store/internal/check"
)

// Search: graph_message_words (migrations[9]) is an FTS5 index that a
// trigger fills through a function of this process, registered for every
// connection: rewind_words(thread, body), the thread's word then the
// body's words (store.BodyWords, so that every store finds the same
// messages). rewind_thread_word(thread) is the thread's word alone, for
// DeleteThread.

func init() {
	if err := sqlite.RegisterDeterministicScalarFunction("rewind_words", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		thread, _ := args[0].(string)
		var body []byte
		switch v := args[1].(type) {
		case string:
			body = []byte(v)
		case []byte:
			body = v
		}
		return threadWord(thread) + " " + strings.Join(store.BodyWords(body), " "), nil
	}); err != nil {
		panic(err)
	}
	if err := sqlite.RegisterDeterministicScalarFunction("rewind_thread_word", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		s, _ := args[0].(string)
		return threadWord(s), nil
	}); err != nil {
		panic(err)
	}
}

// threadWord names a thread in graph_message_words: one token whatever
// the id holds, of a fixed length however long it is, beginning with
// "_" (a token character of the index's tokenizer, never of a query
// word: no query word begins it). A search joins the bodies by the
// thread's id, so two ids sharing a word (80 bits of their hash) would
// still find only their own messages.
func threadWord(thread string) string { return "_t" + store.ContentHash([]byte(thread)) }

// searchMatch is the FTS5 query for a thread's messages holding a word
// that begins with each of words (letters and digits only: nothing in
// them is FTS5 syntax, and each is quoted besides).
func searchMatch(thread string, words []string) string {
	var b strings.Builder
	b.WriteString(`"` + threadWord(thread) + `"`)
	for _, w := range words {
		b.WriteString(` AND "` + w + `" *`)
	}
	return b.String()
}

func (s *Store) Search(ctx context.Context, thread, query string, limit int) (_ []store.Message, err error) {
	defer s.wrap(ctx, &err, "search thread %v", check.Name(thread))
	words, err := check.Query(query)
	if err != nil {
		return nil, err
	}
	// Not prepared at Open: a store that only reads may be of an older
	// schema, without the index (the app refuses it before a search).
	query, args := sqlSearch, []any{thread, searchMatch(thread, words), limit}
	if limit <= 0 {
		query, args = sqlSearchAll, args[:2]
	}
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return scanMessages(rows, thread)
}
