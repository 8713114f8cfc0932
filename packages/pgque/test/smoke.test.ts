import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../test-support/database.js';

describe('engine smoke', () => {
  it('sends, ticks, receives and acks', async () => {
    const { pool } = await createTestDatabase();
    const q = randomName();
    await pool.query('select pgque.create_queue($1)', [q]);
    await pool.query('select pgque.subscribe($1, $2)', [q, 'c1']);
    await pool.query(`select pgque.send($1, 'greeting', '{"hi":1}'::text)`, [q]);
    await pool.query('select pgque.ticker($1)', [q]);
    const { rows } = await pool.query('select * from pgque.receive($1, $2, 10)', [q, 'c1']);
    expect(rows).toHaveLength(1);
    expect(rows[0].type).toBe('greeting');
    const ack = await pool.query('select pgque.ack($1) as r', [rows[0].batch_id]);
    expect(ack.rows[0].r).toBe(1);
  });
});
