import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type FormLimits, readBoundedForm } from '../../src/http/bounded-form.js';
import { AppError } from '../../src/services/errors.js';

const limits: FormLimits = {
  fields: 10,
  nameBytes: 100,
  valueBytes: 1000,
  large: {},
  bodyBytes: 100_000,
};
const parse = (body: Buffer, type: string, headers: Record<string, string> = {}) =>
  new Promise<Record<string, string>>((resolve, reject) =>
    readBoundedForm({ 'content-type': type, ...headers }, Readable.from([body]), limits, (e, f) =>
      e ? reject(e) : resolve(f ?? {}),
    ),
  );
const multipart = async (form: FormData) => {
  const request = new Request('http://x/', { method: 'POST', body: form });
  return [
    Buffer.from(await request.arrayBuffer()),
    request.headers.get('content-type') ?? '',
  ] as const;
};

/** The bounded form reader the public mail webhook uses (the route's own test covers the bounds). */
describe('reading a form within bounds', () => {
  it('decodes UTF-8 in both encodings, the last of a repeated name winning', async () => {
    const form = new FormData();
    form.append('a', 'ção → 漢');
    form.append('b', 'x');
    form.append('b', 'y');
    expect(await parse(...(await multipart(form)))).toEqual({ a: 'ção → 漢', b: 'y' });
    const body = Buffer.from(new URLSearchParams({ a: 'ção → 漢', b: 'x+y &z' }).toString());
    expect(await parse(body, 'application/x-www-form-urlencoded')).toEqual({
      a: 'ção → 漢',
      b: 'x+y &z',
    });
  });

  it('drops file parts, counting them as parts', async () => {
    const form = new FormData();
    form.append('a', '1');
    form.append('f', new Blob(['file bytes']), 'f.txt');
    expect(await parse(...(await multipart(form)))).toEqual({ a: '1' });
    for (let n = 0; n < limits.fields; n++) form.append('f', new Blob(['x']), 'f.txt');
    const error = await parse(...(await multipart(form))).catch((e: unknown) => e);
    expect((error as AppError).status).toBe(413);
  });

  it('refuses a declared length past the bound before reading, and a malformed form with 400', async () => {
    const declared = await parse(Buffer.from('a=1'), 'application/x-www-form-urlencoded', {
      'content-length': String(limits.bodyBytes + 1),
    }).catch((e: unknown) => e);
    expect(declared).toBeInstanceOf(AppError);
    expect((declared as AppError).status).toBe(413);
    const bytes = await parse(
      Buffer.from(`a=${'x'.repeat(limits.bodyBytes)}`),
      'application/x-www-form-urlencoded',
    ).catch((e: unknown) => e);
    expect((bytes as AppError).status).toBe(413);
    expect((bytes as AppError).message).toMatch(/a body of more than 100000 bytes/);
    const broken = await parse(Buffer.from('no boundary'), 'multipart/form-data').catch(
      (e: unknown) => e,
    );
    expect((broken as AppError).status).toBe(400);
  });
});
