-- rewind store schema, version 9: full-text search (Store.Search). Each
-- message's words (store.BodyWords, made a tsvector as they are by
-- array_to_tsvector: no parser, no dictionary, no locale), written by its
-- put in the same statement; the messages stored before are indexed by
-- the migration in Go (indexMessages, migrate.go), which computes them.
-- The GIN index's pending list (fastupdate) is kept to its smallest,
-- 64 kB: a put appends its words there and the list is merged into the
-- index a few dozen turns at a time. At the 4 MB default a search scanned
-- thousands of pending messages, and the planner chose a sequential scan
-- (60 ms on a 1,000-turn thread; 0.1 ms once merged).
alter table graph_messages add column words tsvector;
create index graph_messages_words on graph_messages using gin (words) with (gin_pending_list_limit = 64);
