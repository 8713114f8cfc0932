import type { z } from 'zod';
import type {
  achievementOut,
  activityPageOut,
  agentOut,
  alertPageOut,
  calendarOut,
  commentPageOut,
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
export type CommentPage = Out<typeof commentPageOut>;
export type ActivityPage = Out<typeof activityPageOut>;
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

/** A mailbox an agent can email a customer from (GET /api/mailbox-addresses). */
export interface MailboxAddress {
  id: number;
  address: string;
  display_name: string;
  team_id: number | null;
  priority: Priority;
}

/** An on-call schedule (GET /api/schedules). */
export interface Schedule {
  id: number;
  name: string;
  time_zone: string;
  team_id: number | null;
  fallback_agent_id: number | null;
  layers: {
    name: string;
    participant_ids: number[];
    shift_length: number;
    shift_unit: 'hours' | 'days' | 'weeks';
    handoff_time: string;
    start_date: string;
    restrictions: { days: string[]; start: string; end: string }[];
  }[];
  /** Counts its changes: a PATCH sends it back as If-Match. */
  revision: number;
}

type AgentBrief = { id: number; name: string; email: string };

/** One stretch of a schedule's final shifts; `source: 'gap'` has nobody. */
export interface Shift {
  start: string;
  end: string;
  agent_id: number | null;
  agent: AgentBrief | null;
  source: 'override' | 'layer' | 'gap';
  layer: number | null;
  override_id: number | null;
}

export interface ScheduleOverride {
  id: number;
  agent_id: number;
  agent: AgentBrief | null;
  starts_at: string;
  ends_at: string;
  created_by: string;
}

/** Who is on call now in a team's schedules (GET /api/on-call). */
export interface TeamOnCall {
  team_id: number;
  team_name: string;
  schedules: {
    schedule_id: number;
    schedule_name: string;
    agent: AgentBrief | null;
    source: 'override' | 'layer' | 'gap';
    until: string | null;
  }[];
}
