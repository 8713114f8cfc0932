/**
 * The Standard Schema v1 interface (https://standardschema.dev), declared here so that
 * any library implementing it (zod 4, Valibot, ArkType, …) can validate payloads without
 * being a dependency of this package.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardSchemaIssue> };

export interface StandardSchemaIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The output type of a schema. */
export type InferOutput<S> = S extends StandardSchemaV1<unknown, infer O> ? O : unknown;

/** Validates `value`; the parsed value, or one line describing every issue. */
export async function validateWithSchema<Output>(
  schema: StandardSchemaV1<unknown, Output>,
  value: unknown,
): Promise<{ ok: true; value: Output } | { ok: false; problem: string }> {
  const result = await schema['~standard'].validate(value);
  if (result.issues) {
    const problem = result.issues
      .map((issue) => {
        const path = (issue.path ?? [])
          .map((part) => String(typeof part === 'object' && part !== null ? part.key : part))
          .join('.');
        return path ? `${path}: ${issue.message}` : issue.message;
      })
      .join('; ');
    return { ok: false, problem: problem || 'rejected by the schema' };
  }
  return { ok: true, value: result.value };
}

export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    '~standard' in value &&
    typeof (value as StandardSchemaV1)['~standard']?.validate === 'function'
  );
}
