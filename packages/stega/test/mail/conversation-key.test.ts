import { describe, expect, it } from 'vitest';
import { conversationKeyOf, senderOf } from '../../src/mail/conversation-key.js';

describe('the conversation key of a message', () => {
  it('is the From header’s first address, as the filer reads the sender', () => {
    expect(
      senderOf('Subject: x\r\nFrom: "Costa, Rui" <Rui@Customer.TEST>\r\nTo: a@b.test\r\n'),
    ).toBe('Rui@Customer.TEST');
    expect(senderOf('From:\r\n  Rui Costa\r\n  <rui@customer.test>\r\n')).toBe('rui@customer.test');
    expect(senderOf('From: Undisclosed:;, rui@customer.test\r\n')).toBe('rui@customer.test');
    expect(senderOf('From: Team: ana@customer.test, rui@customer.test;\r\n')).toBe(
      'ana@customer.test',
    );
    expect(senderOf('From: nobody\r\nSubject: x\r\n')).toBeUndefined();
    expect(senderOf('Subject: no sender\r\n')).toBeUndefined();
  });

  it('lower-cases and bounds the address; nothing usable gives no key', () => {
    expect(conversationKeyOf(' Rui@Customer.TEST ')).toBe('rui@customer.test');
    expect(conversationKeyOf(`${'x'.repeat(1000)}@customer.test`)).toHaveLength(320);
    expect(conversationKeyOf('')).toBeNull();
    expect(conversationKeyOf(null)).toBeNull();
    expect(conversationKeyOf(undefined)).toBeNull();
  });
});
