-- ticker_prompt takes the least interval between two ticks it makes for a waiting consumer
-- of a busy queue, and answers when it wants to be called again (next_in): a new signature
-- and result type, so the old function goes here and the function files make the new one.
drop function if exists pgque.ticker_prompt(text[], interval, float8);
