/**
 * The one seam to the database: anything with pg's `query(text, values)`.
 * A `pg.Pool`, a `pg.Client`, or the caller's own client inside `BEGIN … COMMIT`.
 */
export interface Queryable {
  query(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
}
