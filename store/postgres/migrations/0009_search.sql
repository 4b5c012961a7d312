-- rewind store schema, version 9: full-text search (Store.Search). Each
-- message's words (store.BodyWords, made a tsvector as they are by
-- array_to_tsvector: no parser, no dictionary, no locale), written by its
-- put in the same statement; the messages stored before are indexed by
-- the migration in Go (indexMessages, migrate.go), which computes them.
alter table graph_messages add column words tsvector;
create index graph_messages_words on graph_messages using gin (words);
