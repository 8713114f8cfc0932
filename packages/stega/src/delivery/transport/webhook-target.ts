import dns from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses a webhook may reach. Only plain public unicast addresses are allowed, unless
 * the operator lists a network in WEBHOOK_ALLOWED_NETWORKS: loopback, private (RFC 1918),
 * carrier-grade NAT, link-local (169.254/16, the cloud metadata address), unique-local,
 * multicast, unspecified, broadcast, reserved and the IPv6 forms that embed an IPv4 address
 * (NAT64, 6to4, Teredo, and the deprecated IPv4-compatible ::/96 with the rest of the
 * reserved ::/8) are refused. IPv4-mapped IPv6 addresses are judged as the IPv4 address they
 * carry. Odd IPv4 spellings (`0x7f000001`, `2130706433`, `0177.0.0.1`) are normalised by the
 * URL parser before they get here. The names `localhost` and `*.localhost` (with or without
 * a trailing dot) are loopback whatever DNS says (RFC 6761): judged as 127.0.0.1 and ::1.
 */

const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  carrierGradeNat: 'a carrier-grade NAT address',
  linkLocal: 'a link-local address',
  uniqueLocal: 'a unique-local address',
  multicast: 'a multicast address',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
};

/**
 * IPv6 ranges ipaddr.js calls unicast that are not: `[::127.0.0.1]` (written `[::7f00:1]`)
 * reaches the IPv4 address it carries on some systems.
 */
const IPV6_NOT_UNICAST: [ipaddr.IPv6, number, string][] = [
  [ipaddr.IPv6.parse('::'), 96, 'an IPv4-compatible IPv6 address (::/96)'],
  [ipaddr.IPv6.parse('::'), 8, 'a reserved address (::/8)'],
];

/** What `ip` is when it may not be a target unless allowed, or undefined (public unicast). */
function restrictedRange(ip: ipaddr.IPv4 | ipaddr.IPv6): string | undefined {
  const range = ip.range();
  if (range !== 'unicast') return RANGE_WORDS[range] ?? `a reserved address (${range})`;
  if (ip.kind() !== 'ipv6') return undefined;
  return IPV6_NOT_UNICAST.find(([network, bits]) => ip.match(network, bits))?.[2];
}

/** The addresses a `localhost` name stands for (RFC 6761), or undefined for another name. */
export function localhostAddresses(hostname: string): string[] | undefined {
  const name = hostname.toLowerCase().replace(/\.+$/, '');
  return name === 'localhost' || name.endsWith('.localhost') ? ['127.0.0.1', '::1'] : undefined;
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];
const parsedLists = new Map<string, Cidr[]>();

function cidrsOf(allowed: readonly string[]): Cidr[] {
  const key = allowed.join(',');
  let cidrs = parsedLists.get(key);
  if (!cidrs) {
    cidrs = allowed.map((cidr) => ipaddr.parseCIDR(cidr));
    parsedLists.set(key, cidrs);
  }
  return cidrs;
}

/**
 * Parses WEBHOOK_ALLOWED_NETWORKS (comma-separated CIDRs; a bare address means that one host)
 * into normalised CIDR strings. Throws an Error naming the first bad entry.
 */
export function parseAllowedNetworks(raw: string): string[] {
  const out: string[] = [];
  for (const entry of raw.split(',').map((s) => s.trim())) {
    if (entry === '') continue;
    let cidr: Cidr;
    try {
      cidr = entry.includes('/')
        ? ipaddr.parseCIDR(entry)
        : ((address) => [address, address.kind() === 'ipv4' ? 32 : 128])(ipaddr.parse(entry));
    } catch {
      throw new Error(
        `${JSON.stringify(entry)} is not a CIDR network (e.g. 10.0.0.0/8, 127.0.0.1/32, fd00::/8)`,
      );
    }
    out.push(`${cidr[0].toString()}/${cidr[1]}`);
  }
  return out;
}

/**
 * Why `address` (an IP literal) may not be a webhook target, or undefined when it may:
 * its normalised form and what it is ("a loopback address").
 */
export function addressRefusal(
  address: string,
  allowed: readonly string[],
): { address: string; what: string } | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address.replace(/^\[|\]$/g, ''));
  } catch {
    return { address, what: 'not an IP address' };
  }
  const what = restrictedRange(ip);
  if (what === undefined) return undefined;
  for (const [network, bits] of cidrsOf(allowed)) {
    if (network.kind() === ip.kind() && ip.match(network, bits)) return undefined;
  }
  return { address: ip.toString(), what };
}

/** How long the API waits for a webhook host name to resolve. */
const LOOKUP_TIMEOUT_MS = 3000;

const HINT = 'list its network in WEBHOOK_ALLOWED_NETWORKS to allow it';

function refusedName(hostname: string, addresses: readonly string[], allowed: readonly string[]) {
  for (const address of addresses) {
    const refusal = addressRefusal(address, allowed);
    if (refusal) return `${hostname} resolves to ${refusal.address}, ${refusal.what}; ${HINT}`;
  }
  return undefined;
}

/** Why `url` may not be a webhook target before any name is resolved (credentials, scheme, IP literal). */
export function urlRefusal(url: URL, allowed: readonly string[]): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) URL';
  if (url.username || url.password)
    return 'must not contain credentials (user:password@); put a secret in the path or use the signing secret';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = localhostAddresses(host);
  if (loopback) return refusedName(host, loopback, allowed);
  if (!isIP(host)) return undefined;
  const refusal = addressRefusal(host, allowed);
  return refusal && `${refusal.address} is ${refusal.what}; ${HINT}`;
}

/**
 * The full check of the API: the URL itself, then every address its host name resolves to.
 * A name that does not resolve now (or not within LOOKUP_TIMEOUT_MS) is accepted: DNS may be
 * down for a moment, and the send-time check refuses it later if it resolves somewhere forbidden.
 */
export async function webhookUrlRefusal(
  raw: string,
  allowed: readonly string[],
): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an http(s) URL';
  }
  const early = urlRefusal(url, allowed);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (early || isIP(host) || localhostAddresses(host)) return early;
  let addresses: dns.LookupAddress[];
  let timer: NodeJS.Timeout | undefined;
  try {
    addresses = await Promise.race([
      dns.promises.lookup(url.hostname, { all: true }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), LOOKUP_TIMEOUT_MS);
      }),
    ]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
  return refusedName(
    url.hostname,
    addresses.map((a) => a.address),
    allowed,
  );
}

/** Thrown (through the socket) when a name resolves to a refused address at send time. */
export class WebhookTargetRefused extends Error {
  override name = 'WebhookTargetRefused';
}

/**
 * A `lookup` for net/tls.connect that resolves the name, refuses it when any of its addresses
 * is refused, and hands the connection exactly the addresses it checked (so a DNS answer
 * that changes between the check and the connect cannot slip through).
 */
export function guardedLookup(allowed: readonly string[]): LookupFunction {
  return (hostname, options, callback) => {
    const loopback = localhostAddresses(hostname);
    const named = loopback && refusedName(hostname, loopback, allowed);
    if (named) return callback(new WebhookTargetRefused(named), '', 0);
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const refusal = refusedName(
        hostname,
        addresses.map((a) => a.address),
        allowed,
      );
      if (refusal) return callback(new WebhookTargetRefused(refusal), '', 0);
      if (options.all) return (callback as unknown as AllCallback)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new Error(`${hostname} has no address`), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

type AllCallback = (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void;
