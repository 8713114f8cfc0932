-- A queue the leader ticker found quiet is "armed" (queue_ticker_wake): its next producer
-- sends NOTIFY "pgque.ticker" (delivered at that producer's commit), so the ticker ticks it
-- at once instead of at its next period. A busy queue is never armed, so its producers
-- send nothing. Set and cleared by the ticker only: producers just read it.
alter table pgque.queue add column queue_ticker_wake boolean not null default false;
