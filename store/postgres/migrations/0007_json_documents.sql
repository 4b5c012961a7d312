-- rewind store schema, version 7: documents as json, not jsonb.
-- jsonb spells every document again (a space after each colon and comma,
-- keys reordered) and builds a binary form on every write that rewind
-- never queries, then prints it back as text on every read: about 400
-- bytes a turn more than the document (5%), and a conversion each way.
-- json keeps the text as sent, still checked to be JSON, so a row reads
-- back byte for byte as written. Rows stored before keep jsonb's spelling,
-- which is the same JSON. The change rewrites these tables once, under the
-- migration lock: a moment per GB.
alter table graph_checkpoints
  alter column state type json using state::json,
  alter column meta type json using meta::json,
  alter column rebased type json using rebased::json;
alter table graph_writes alter column writes type json using writes::json;
alter table graph_events alter column payload type json using payload::json;
alter table graph_drafts alter column body type json using body::json;
