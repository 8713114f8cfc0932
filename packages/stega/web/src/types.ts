import type { z } from 'zod';
import type {
  achievementOut,
  agentOut,
  alertPageOut,
  calendarOut,
  deadLetterOut,
  escalationPolicyOut,
  missedTargetOut,
  outstandingDeliveriesOut,
  policyOut,
  queueOut,
  reportDetailOut,
  reportOut,
  teamOut,
  ticketDetailOut,
  ticketListOut,
  tokenOut,
} from '../../src/http/response-schemas.js';
import type {
  deliverySeriesOut,
  jobOverviewOut,
  takeoversOut,
} from '../../src/http/routes/pipeline.js';
import type { sessionOut } from '../../src/http/routes/session.js';

/**
 * The API's response bodies, typed from the server's own zod schemas (type imports only:
 * nothing of the server reaches the bundle). JSON turns every Date into an ISO string.
 */
export type Json<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? Json<U>[]
    : T extends object
      ? { [K in keyof T]: Json<T[K]> }
      : T;

type Out<S extends z.ZodType> = Json<z.output<S>>;

export type Session = Out<typeof sessionOut>;
export type TicketPage = Out<typeof ticketListOut>;
export type TicketListItem = TicketPage['items'][number];
export type TicketDetail = Out<typeof ticketDetailOut>;
export type Clock = TicketDetail['clocks'][number];
export type Breach = TicketDetail['breaches'][number];
export type Delivery = TicketDetail['deliveries'][number];
export type Agent = Out<typeof agentOut>;
export type AlertPage = Out<typeof alertPageOut>;
export type Alert = AlertPage['items'][number];
export type Token = Out<typeof tokenOut>;
export type Team = Out<typeof teamOut>;
export type Achievement = Out<typeof achievementOut>;
export type MissedTarget = Out<typeof missedTargetOut>;
export type Calendar = Out<typeof calendarOut>;
export type Policy = Out<typeof policyOut>;
export type Queue = Out<typeof queueOut>;
export type Consumer = Queue['consumers'][number];
export type DeadLetter = Out<typeof deadLetterOut>;
export type Report = Out<typeof reportOut>;
export type ReportDetail = Out<typeof reportDetailOut>;
export type Takeovers = Out<typeof takeoversOut>;
export type JobOverview = Out<typeof jobOverviewOut>;
export type DeliverySeries = Out<typeof deliverySeriesOut>;
export type OutstandingDeliveries = Out<typeof outstandingDeliveriesOut>;
export type EscalationPolicy = Out<typeof escalationPolicyOut>;
export type Escalation = TicketDetail['escalations'][number];

export type Priority = TicketListItem['priority'];
export type TicketStatus = TicketListItem['status'];
export type ClockState = Clock['state'];

export const PRIORITIES: readonly Priority[] = ['urgent', 'high', 'normal', 'low'];
export const STATUSES: readonly TicketStatus[] = [
  'open',
  'in_progress',
  'waiting',
  'resolved',
  'closed',
];

/** The ticket life cycle (the server checks it too; this only offers the allowed moves). */
export const NEXT_STATUSES: Record<TicketStatus, readonly TicketStatus[]> = {
  open: ['in_progress', 'waiting', 'resolved'],
  in_progress: ['open', 'waiting', 'resolved'],
  waiting: ['open', 'in_progress', 'resolved'],
  resolved: ['open', 'closed'],
  closed: ['open'],
};

export const WEEKDAYS = [
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
] as const;
export type Weekday = (typeof WEEKDAYS)[number];
