-- rewind store schema, version 12: RecentThreads' order (updated_at,
-- then thread_id bytewise, descending): a page of threads and the count
-- of the rest read this index, not every row sorted (store.ThreadCursor).
create index graph_threads_updated on graph_threads (updated_at, thread_id collate "C");
