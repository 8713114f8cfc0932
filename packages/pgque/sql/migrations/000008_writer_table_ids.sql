-- _writer_table now answers the queue id and its current table's number (send_batch hands
-- them to pgque._write_event; insert_event_raw derives the names) instead of the table and
-- sequence names: a new result type, so the old function goes here and the functions
-- that follow make the new one.
drop function if exists pgque._writer_table(text);
