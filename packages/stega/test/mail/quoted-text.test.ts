import { describe, expect, it } from 'vitest';
import { quotedTextStart } from '../../src/mail/quoted-text.js';

/** Where the quoted history of an emailed reply begins, as the ticket view folds it. */
describe('quoted text', () => {
  const folded = (body: string) => {
    const at = quotedTextStart(body);
    return at === null ? null : { reply: body.slice(0, at).trim(), quoted: body.slice(at) };
  };

  it('folds from an attribution line, also one wrapped over two lines, in several languages', () => {
    expect(
      folded('Works now.\n\nOn Mon, 2 Mar 2026 at 10:02, Ana <a@x.test> wrote:\n> Try again.'),
    ).toEqual({
      reply: 'Works now.',
      quoted: 'On Mon, 2 Mar 2026 at 10:02, Ana <a@x.test> wrote:\n> Try again.',
    });
    expect(
      folded(
        'Thanks!\r\n\r\nOn Mon, 2 Mar 2026 at 10:02, Ana Sousa at Acme Support <\r\nsupport@acme.test> wrote:\r\n> Try again.\r\n',
      )?.quoted,
    ).toMatch(/^On Mon, 2 Mar 2026 at 10:02, Ana Sousa at Acme Support <\r\nsupport/);
    expect(folded('Merci.\n\nLe lun. 2 mars 2026, Ana a écrit :\n> Essayez.')?.reply).toBe(
      'Merci.',
    );
    expect(
      folded('Danke.\n\nAm 02.03.2026 um 10:02 schrieb Ana <a@x.test>:\n> Bitte.')?.reply,
    ).toBe('Danke.');
  });

  it('folds from a separator, an Outlook header block, a signature or a trailing > block', () => {
    expect(folded('Yes.\n\n-----Original Message-----\nFrom: Ana\nSent: Monday')?.reply).toBe(
      'Yes.',
    );
    expect(folded('Yes.\n\n________________________________\nFrom: Ana\nSent: Monday')?.reply).toBe(
      'Yes.',
    );
    expect(
      folded('Yes.\n\nFrom: Ana Sousa <a@x.test>\nSent: Monday, 2 March 2026 10:02\nTo: Rui')
        ?.quoted,
    ).toMatch(/^From: Ana Sousa/);
    expect(folded('Yes.\n-- \nRui Costa\nCustomer Ltd')?.quoted).toBe(
      '-- \nRui Costa\nCustomer Ltd',
    );
    expect(folded('Yes, see below.\n\n> first line\n>\n> second line\n')?.reply).toBe(
      'Yes, see below.',
    );
  });

  it('folds nothing without a quote, inside quotes answered inline, or when all of it is quoted', () => {
    expect(folded('Since this morning nobody can connect.')).toBeNull();
    expect(folded('> is it the VPN?\nYes, the VPN.\n> and the printer?\nThat too.')).toBeNull();
    expect(folded('On Mon, Ana wrote:\n> hello')).toBeNull();
    expect(folded('From: the boss\nplease fix it')).toBeNull();
  });
});
