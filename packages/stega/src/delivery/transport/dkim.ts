import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * DKIM signing of the mail Stega sends (DKIM_SELECTOR, DKIM_PRIVATE_KEY_FILE, DKIM_DOMAINS):
 * each message whose From domain is listed (every domain when the list is empty) is signed
 * for that domain with the selector and key, so the receiver looks the public key up at
 * `<selector>._domainkey.<domain>`.
 */
export interface DkimSigning {
  selector: string;
  /** The private key, PEM (RSA or Ed25519). */
  privateKey: string;
  /** The From domains signed, lower-cased; empty: every From domain. */
  domains: string[];
}

/** nodemailer's per-message DKIM option. */
export interface DkimOption {
  domainName: string;
  keySelector: string;
  privateKey: string;
}

const SELECTOR =
  /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/**
 * Reads and checks the signing settings: a selector that is a DNS name, a key file that
 * holds a private key. Answers the problem in the variables' words, or the settings.
 */
export function dkimSigningLoad(settings: {
  selector: string | undefined;
  keyFile: string | undefined;
  domains: string | undefined;
}): { problem: string } | { signing: DkimSigning | undefined } {
  const selector = settings.selector?.trim();
  const keyFile = settings.keyFile?.trim();
  if (!selector && !keyFile) {
    return settings.domains?.trim()
      ? { problem: 'DKIM_DOMAINS is set but DKIM_SELECTOR and DKIM_PRIVATE_KEY_FILE are not' }
      : { signing: undefined };
  }
  if (!selector || !keyFile) {
    return { problem: 'DKIM_SELECTOR and DKIM_PRIVATE_KEY_FILE go together: set both or neither' };
  }
  if (!SELECTOR.test(selector)) {
    return {
      problem: `DKIM_SELECTOR must be a DNS name such as stega2026, not ${JSON.stringify(selector)}`,
    };
  }
  let privateKey: string;
  try {
    privateKey = readFileSync(keyFile, 'utf8');
  } catch (error) {
    return { problem: `DKIM_PRIVATE_KEY_FILE cannot be read: ${(error as Error).message}` };
  }
  try {
    const key = createPrivateKey(privateKey);
    if (key.asymmetricKeyType !== 'rsa' && key.asymmetricKeyType !== 'ed25519') {
      return {
        problem: `DKIM_PRIVATE_KEY_FILE holds a ${key.asymmetricKeyType} key; DKIM takes RSA or Ed25519`,
      };
    }
  } catch {
    return { problem: 'DKIM_PRIVATE_KEY_FILE does not hold a PEM private key' };
  }
  const domains = (settings.domains ?? '')
    .split(',')
    .map((domain) => domain.trim().toLowerCase())
    .filter(Boolean);
  return { signing: { selector, privateKey, domains } };
}

/** The domain of a sender, `Name <user@domain>` or `user@domain`; null without one. */
export function senderDomain(from: string | { address: string }): string | null {
  const address =
    typeof from === 'string' ? (/<([^>]*)>\s*$/.exec(from)?.[1] ?? from) : from.address;
  const at = address.lastIndexOf('@');
  return at < 0
    ? null
    : address
        .slice(at + 1)
        .trim()
        .toLowerCase() || null;
}

/** The DKIM option of a message from `from`, or undefined when its domain is not signed. */
export function dkimOptionFor(
  signing: DkimSigning | undefined,
  from: string | { address: string },
): DkimOption | undefined {
  if (!signing) return undefined;
  const domain = senderDomain(from);
  if (!domain || (signing.domains.length > 0 && !signing.domains.includes(domain)))
    return undefined;
  return { domainName: domain, keySelector: signing.selector, privateKey: signing.privateKey };
}
