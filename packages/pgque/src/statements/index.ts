// The statement modules: one exported function per engine call, each taking the
// connection to run on first (a pool, a client, or the caller's transaction).
export {
  ack,
  DEFAULT_MAX_MESSAGES,
  type Message,
  type NackRequest,
  nack,
  receive,
  settle,
  subscribe,
  ticksPending,
  unsubscribe,
} from './consume.js';
export {
  receiveCoop,
  subscribeSubconsumer,
  touchSubconsumer,
  unsubscribeSubconsumer,
} from './cooperative.js';
export { type DeadLetter, dlqInspect, dlqPurge, dlqReplay, dlqReplayAll } from './dead-letters.js';
export {
  ackPartitioned,
  claimSlot,
  DEFAULT_LEASE_TTL,
  MAX_SLOTS,
  nackPartitioned,
  partitionSlotStatus,
  receivePartitioned,
  releaseSlot,
  removePartitionWorker,
  type SlotHolder,
  type SlotStatus,
  settlePartitioned,
  slotConsumerName,
  subscribePartitioned,
  subscribeSlot,
  touchPartitionWorker,
  unsubscribeSlot,
} from './partitions.js';
export {
  type IdempotentEvent,
  type IdempotentSend,
  type OutgoingEvent,
  send,
  sendBatch,
  sendIdempotent,
} from './produce.js';
export {
  type ConsumerConfig,
  type ConsumerInfo,
  consumerConfig,
  consumerInfo,
  createQueue,
  dropQueue,
  type QueueConfig,
  type QueueInfo,
  queueInfo,
  setConsumerConfig,
  setQueueConfig,
} from './queues.js';
export { type CoopTakeover, coopTakeovers } from './takeovers.js';
export {
  forceNextTick,
  maint,
  maintIdem,
  maintRetryEvents,
  ticker,
  tickerAll,
} from './ticking.js';
