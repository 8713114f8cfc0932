import pg from 'pg';

const INT8 = 20;
const INT8_ARRAY = 1016;

function parseInt8Array(text: string): (bigint | null)[] {
  const inner = text.slice(1, -1);
  if (inner === '') return [];
  return inner.split(',').map((item) => (item === 'NULL' ? null : BigInt(item)));
}

/**
 * Type parsers for one pool: `int8` and `int8[]` become `bigint`, everything else keeps
 * node-postgres' built-in parser. Passed as a pool's `types` option, so the global
 * `pg.types` registry is never modified.
 */
export const pgqueTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (format === undefined || format === 'text') {
      if (oid === INT8) return (text: string) => BigInt(text);
      if (oid === INT8_ARRAY) return parseInt8Array;
    }
    return pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig['getTypeParser'],
};
