import { z } from 'zod';

/** Shared request and response schemas of the HTTP API (zod; OpenAPI is generated from them). */

export const idParams = z.object({
  id: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER),
});

export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(500).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
};

/** `true`/`false` (also 1/0, yes/no) in a query string. */
export const queryBoolean = z.stringbool();

/** A comma-separated list in a query string: `status=open,in_progress`. */
export function queryList<T extends z.ZodType<string, string>>(item: T) {
  const list = z.array(item).min(1) as unknown as z.ZodType<z.output<T>[], string[]>;
  return z
    .string()
    .transform((raw) =>
      raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(list);
}

const trimmed = (max: number) => z.string().trim().min(1, { error: 'must not be empty' }).max(max);
export const text = trimmed;
export const email = z.email({ error: 'must be an email address' }).max(320);

/** The body of every error response. `issues` names the failing fields (400, some 409). */
export const errorSchema = z.object({
  error: z.string(),
  code: z.string(),
  message: z.string(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});

/** The error responses a route may give, for its OpenAPI description. */
export const errors = {
  400: errorSchema,
  401: errorSchema,
  403: errorSchema,
  404: errorSchema,
  409: errorSchema,
  429: errorSchema,
} as const;

export const nullableDate = z.date().nullable();
