import { z } from 'zod';

const EXPECTED: Record<string, string> = {
  number: 'must be a number',
  int: 'must be a whole number',
  string: 'must be text',
  boolean: 'must be true or false',
  array: 'must be a list',
  object: 'must be an object',
  date: 'must be a date',
};

/**
 * Words for zod's own messages where a schema gives none: "must be a number", not
 * "Invalid input: expected number, received string". Installed once when the app is built
 * (zod's configuration is per process); schemas with their own `error` keep it.
 */
export function installValidationMessages(): void {
  z.config({
    customError: (issue) => {
      if (issue.code === 'invalid_type') {
        if (issue.input === undefined) return 'is required';
        if (issue.input === null) return 'must not be empty';
        return EXPECTED[issue.expected] ?? `must be a ${issue.expected}`;
      }
      if (issue.code === 'invalid_value' && issue.values.length > 1) {
        return `must be one of: ${issue.values.map(String).join(', ')}`;
      }
      return undefined;
    },
  });
}
