import { agentIdentityFind, agentIdentitySignedIn } from '../db/agent-identities.js';
import { agentFindForSignIn, agentGet, agentInsert } from '../db/agents.js';
import { inTransaction } from '../db/pool.js';
import { teamIdsByName, teamMemberAdd, teamMemberRemove } from '../db/teams.js';
import type { Logger } from '../log.js';
import type { ServiceContext } from './context.js';
import { SingleSignOnRefusedError } from './errors.js';

/**
 * Who a person signing in with the OpenID provider is in Stega: the rules of single sign-on's
 * accounts, apart from the protocol (single-sign-on.ts).
 *
 * Every sign-in needs an address the provider verified (`email_verified` true) in one of the
 * allowed domains, whoever it is. The agent is the one the provider's account (issuer, `sub`)
 * was linked to at an earlier sign-in; else the agent of that address, any case (now linked);
 * else a new agent of role `agent` made for it (just in time). A deactivated agent is refused.
 * With a groups claim configured, the agent's membership of each team the group mapping
 * names follows their groups at every sign-in; other teams are not touched.
 */
export interface AccountRules {
  issuer: string;
  allowedDomains: readonly string[];
  groupsClaim: string | undefined;
  groupTeams: ReadonlyMap<string, readonly string[]>;
}

/** The claims of the ID token and the userinfo answer, merged. */
export type Claims = Record<string, unknown>;

/** The longest agent name made from a provider's claims. */
const NAME_MAX = 100;

/**
 * The agent the person signs in as, made or linked as the rules say, their teams set from
 * their groups. @throws SingleSignOnRefusedError (no_email, unverified_email,
 * domain_not_allowed, deactivated)
 */
export async function singleSignOnAgent(
  ctx: ServiceContext,
  rules: AccountRules,
  claims: Claims,
  logger: Logger,
): Promise<number> {
  const subject = typeof claims.sub === 'string' ? claims.sub : '';
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  if (!subject || !/^[^@\s]+@[^@\s]+$/.test(email)) {
    throw new SingleSignOnRefusedError('no_email', 'the provider sent no email address');
  }
  // some providers send the boolean as a string
  if (claims.email_verified !== true && claims.email_verified !== 'true') {
    throw new SingleSignOnRefusedError(
      'unverified_email',
      `the provider has not verified ${email}`,
    );
  }
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (!rules.allowedDomains.includes(domain)) {
    throw new SingleSignOnRefusedError(
      'domain_not_allowed',
      `${domain} is not in OIDC_ALLOWED_DOMAINS`,
    );
  }
  const now = ctx.now();
  return inTransaction(ctx.pool, async (tx) => {
    const linked = await agentIdentityFind(tx, rules.issuer, subject);
    let agentId: number;
    if (linked !== undefined) {
      const agent = await agentGet(tx, linked);
      if (!agent || agent.deactivated_at !== null) throw deactivated(email);
      agentId = linked;
    } else {
      const agent = await agentFindForSignIn(tx, email);
      if (agent && !agent.active) throw deactivated(email);
      agentId =
        agent?.id ??
        (await agentInsert(tx, { name: nameOf(claims, email), email, role: 'agent' }, now)).id;
      if (!agent) logger.info({ agentId, domain }, 'single sign-on made a new agent');
    }
    await agentIdentitySignedIn(tx, { agent_id: agentId, issuer: rules.issuer, subject }, now);
    if (rules.groupsClaim && rules.groupTeams.size > 0) {
      await followGroups(tx, agentId, groupsOf(claims[rules.groupsClaim]), rules, logger);
    }
    return agentId;
  });
}

function deactivated(email: string): SingleSignOnRefusedError {
  return new SingleSignOnRefusedError('deactivated', `the agent of ${email} is deactivated`);
}

/** The person's name as the provider gives it, else the address's local part. */
function nameOf(claims: Claims, email: string): string {
  const given = [claims.given_name, claims.family_name].filter(
    (part): part is string => typeof part === 'string' && part.trim() !== '',
  );
  const name =
    (typeof claims.name === 'string' && claims.name.trim()) ||
    given.join(' ').trim() ||
    email.slice(0, email.indexOf('@'));
  return name.slice(0, NAME_MAX);
}

/** A groups claim: a list of names (a single name is a list of one); anything else, none. */
export function groupsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) return [];
  return value.filter((group): group is string => typeof group === 'string');
}

/**
 * Makes the agent a member of the mapped teams of their groups and takes them out of the
 * other mapped teams. A team name of no team is logged and skipped.
 */
async function followGroups(
  tx: Parameters<typeof teamMemberAdd>[0],
  agentId: number,
  groups: string[],
  rules: AccountRules,
  logger: Logger,
): Promise<void> {
  const managed = [...new Set([...rules.groupTeams.values()].flat())];
  const wanted = new Set(groups.flatMap((group) => rules.groupTeams.get(group) ?? []));
  const ids = await teamIdsByName(tx, managed);
  const missing = managed.filter((name) => !ids.has(name));
  if (missing.length > 0) {
    logger.warn({ teams: missing }, 'OIDC_GROUP_TEAMS names teams that do not exist');
  }
  for (const [name, teamId] of ids) {
    if (wanted.has(name)) await teamMemberAdd(tx, teamId, agentId);
    else await teamMemberRemove(tx, teamId, agentId);
  }
}
