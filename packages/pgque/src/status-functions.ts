/**
 * The engine's read-only status functions, by signature: security definer, they change
 * nothing. A monitoring role (Stega's web process: operations page, pipeline page, /metrics)
 * is granted execute on these one by one instead of pgque_reader, whose consumer functions
 * would let it register, move or finish the real consumers.
 */
export const STATUS_FUNCTIONS = [
  'pgque.version()',
  'pgque.api_level()',
  'pgque.get_queue_info()',
  'pgque.get_queue_info(text)',
  'pgque.get_consumer_info()',
  'pgque.get_consumer_info(text)',
  'pgque.get_consumer_info(text, text)',
  'pgque.dlq_inspect(text, int)',
  'pgque.get_coop_takeovers(text, text, int)',
] as const;
