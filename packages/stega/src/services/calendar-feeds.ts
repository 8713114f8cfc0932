import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '@stega/pgque';
import { agentBriefsByIds } from '../db/agents.js';
import {
  agentFeedTokenGet,
  agentFeedTokenRenew,
  scheduleIdsOfAgent,
  scheduleLoad,
} from '../db/schedules.js';
import type { ServiceContext } from './context.js';
import { NotFoundError } from './errors.js';
import { type IcsEvent, icsCalendar } from './ics.js';
import { schedulesShifts } from './schedules.js';

/**
 * Calendar feeds of on-call shifts (iCalendar over HTTP), one per schedule and one per
 * person, at URLs signed with HMAC-SHA256 under the server's feed key (STEGA_FEED_SECRET,
 * else the database's `calendar_feed` secret) over the feed's subject and its current feed
 * token. Renewing the token (per schedule, per agent) revokes the URLs given out so far;
 * changing the key revokes all of them. The URL is the credential: calendar apps cannot
 * send one of their own.
 */

const VERSION = 'stega-feed-v1';
const DAY = 86_400_000;
/** A feed shows shifts from this many days ago... */
const FEED_PAST_DAYS = 30;
/** ...to this many days ahead. */
const FEED_AHEAD_DAYS = 180;

export type FeedSubject = { kind: 'schedule'; id: number } | { kind: 'agent'; id: number };

export interface CalendarFeeds {
  /** The signed URL of the subject's feed as its token is now. */
  urlFor(subject: FeedSubject, feedToken: string): string;
  /** True when `signature` is the subject's under its current token. */
  verify(subject: FeedSubject, feedToken: string, signature: string): boolean;
}

/** The signing key: the configured one, else the database's (made by migration 000400). */
export async function feedSecretLoad(db: Queryable, configured: string | undefined) {
  if (configured) return configured;
  const { rows } = await db.query(
    `select secret from stega.server_secrets where name = 'calendar_feed'`,
  );
  const secret = rows[0]?.secret as string | undefined;
  if (!secret)
    throw new Error('stega.server_secrets has no calendar_feed secret: run stega migrate');
  return secret;
}

function sign(secret: string, subject: FeedSubject, feedToken: string): string {
  return createHmac('sha256', secret)
    .update(`${VERSION}:${subject.kind}:${subject.id}:${feedToken}`)
    .digest('base64url');
}

export async function calendarFeedsOpen(
  db: Queryable,
  options: { publicUrl: string; secret: string | undefined },
): Promise<CalendarFeeds> {
  const secret = await feedSecretLoad(db, options.secret);
  const base = options.publicUrl.replace(/\/+$/, '');
  return {
    urlFor(subject, feedToken) {
      const path = subject.kind === 'schedule' ? 'schedules' : 'agents';
      return `${base}/feeds/${path}/${subject.id}.ics?sig=${sign(secret, subject, feedToken)}`;
    },
    verify(subject, feedToken, signature) {
      const expected = Buffer.from(sign(secret, subject, feedToken));
      const given = Buffer.from(signature);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/** The feed token of a subject, null when it does not exist. */
async function feedTokenOf(db: Queryable, subject: FeedSubject): Promise<string | null> {
  if (subject.kind === 'agent') return agentFeedTokenGet(db, subject.id);
  const [row] = await scheduleLoad(db, [subject.id], null);
  return row?.feed_token ?? null;
}

/** The signed feed URL of a schedule or an agent. @throws NotFoundError */
export async function feedUrlOf(ctx: ServiceContext, feeds: CalendarFeeds, subject: FeedSubject) {
  const token = await feedTokenOf(ctx.pool, subject);
  if (token === null) throw new NotFoundError(subject.kind, subject.id);
  return feeds.urlFor(subject, token);
}

/**
 * The iCalendar text of a feed, or null when the subject does not exist or the signature is
 * not its current one (the route answers both with 404: a revoked URL says nothing).
 */
export async function feedCalendar(
  ctx: ServiceContext,
  feeds: CalendarFeeds,
  subject: FeedSubject,
  signature: string,
): Promise<string | null> {
  const token = await feedTokenOf(ctx.pool, subject);
  if (token === null || !feeds.verify(subject, token, signature)) return null;
  const now = ctx.now();
  const from = new Date(Math.floor(now.getTime() / DAY) * DAY - FEED_PAST_DAYS * DAY);
  const to = new Date(from.getTime() + (FEED_PAST_DAYS + FEED_AHEAD_DAYS) * DAY);
  const ids =
    subject.kind === 'schedule' ? [subject.id] : await scheduleIdsOfAgent(ctx.pool, subject.id);
  const all = await schedulesShifts(ctx.pool, ids, from, to);
  const events: IcsEvent[] = [];
  for (const { schedule, shifts } of all) {
    for (const shift of shifts) {
      if (subject.kind === 'agent' && shift.agent_id !== subject.id) continue;
      const who = shift.agent?.name ?? 'nobody (gap)';
      events.push({
        uid: `stega-${schedule.id}-${shift.start.getTime()}-${shift.agent_id ?? 'gap'}@stega`,
        start: shift.start,
        end: shift.end,
        summary:
          subject.kind === 'agent'
            ? `On call: ${schedule.name}`
            : `${who} on call (${schedule.name})`,
        description:
          shift.source === 'override'
            ? 'covering (an override)'
            : shift.source === 'gap'
              ? 'nobody is on call: escalations fall back to the fallback agent or the team lead'
              : `layer ${(shift.layer ?? 0) + 1}`,
      });
    }
  }
  let name = `On call: ${all[0]?.schedule.name ?? 'schedule'}`;
  if (subject.kind === 'agent') {
    const agent = (await agentBriefsByIds(ctx.pool, [subject.id])).get(subject.id);
    name = `On call: ${agent?.name ?? 'me'}`;
  }
  return icsCalendar(name, events, now);
}

/** Replaces the agent's feed token: their feed URL given out so far stops working. */
export async function agentFeedRenew(ctx: ServiceContext, agentId: number): Promise<void> {
  if (!(await agentFeedTokenRenew(ctx.pool, agentId))) throw new NotFoundError('agent', agentId);
}
