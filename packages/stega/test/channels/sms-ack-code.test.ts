import { describe, expect, it } from 'vitest';
import { smsAckCode, smsAckCodeMatch } from '../../src/delivery/sms-ack-code.js';

/** The code a paging SMS asks to be replied with: keyed on its ledger row, not the row's id. */
describe('SMS acknowledge codes', () => {
  const secret = 'ack-secret-for-the-sms-code-test-0123456789';

  it('is six digits, the same for a row every time, and no row id a stranger could count to', () => {
    const codes = Array.from({ length: 200 }, (_, i) => smsAckCode(secret, i + 1));
    for (const code of codes) expect(code).toMatch(/^\d{6}$/);
    expect(smsAckCode(secret, 7)).toBe(codes[6]);
    // spread: 200 rows, (almost) 200 codes; and another key gives other codes
    expect(new Set(codes).size).toBeGreaterThan(195);
    expect(smsAckCode(`${secret}x`, 7)).not.toBe(codes[6]);
    expect(codes).not.toContain('000007');
  });

  it('finds the page a code names among the pages texted to the person, and none for another', () => {
    const pages = [41, 42, 43];
    expect(smsAckCodeMatch(secret, smsAckCode(secret, 42), pages)).toBe(42);
    expect(smsAckCodeMatch(secret, smsAckCode(secret, 44), pages)).toBeUndefined();
    expect(smsAckCodeMatch(secret, '42', pages)).toBeUndefined();
    expect(smsAckCodeMatch(secret, smsAckCode(secret, 42), [])).toBeUndefined();
  });
});
