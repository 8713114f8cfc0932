-- Event tables are indexed on (ev_txid, ev_id) instead of (ev_txid): a page of a paged
-- cooperative window that came from one big transaction seeks to its ev_id range rather
-- than reading the whole window. Existing queues get the new index here.
do $reindex$
declare
  q record;
  n int;
  child text;
  idx text;
begin
  for q in select queue_id, queue_data_pfx, queue_ntables from pgque.queue loop
    for n in 0 .. q.queue_ntables - 1 loop
      child := q.queue_data_pfx || '_' || n;
      idx := 'event_' || q.queue_id || '_' || n || '_txid_idx';
      execute pg_catalog.format('drop index if exists pgque.%I', idx);
      execute pg_catalog.format('create index %I on %s (ev_txid, ev_id)', idx, child);
    end loop;
  end loop;
end
$reindex$;
