-- One parameter prefix: functions of our own (not PgQue's public API, whose parameter names
-- clients may use in named notation) take i_ parameters. PostgreSQL cannot rename a parameter
-- with create or replace, so the four that used p_ are dropped here and made again from their
-- files right after the migrations, as on every install.
drop function if exists pgque._clear_member_cursor(int4, int4);
drop function if exists pgque._remove_member(int4, int4, int4);
drop function if exists pgque._touch_member(int4, int4);
drop function if exists pgque.set_tick_period_ms(integer);
