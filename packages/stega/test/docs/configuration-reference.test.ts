import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CONFIG_REFERENCE_PATH,
  configReference,
  undocumentedVariables,
} from '../../scripts/config-reference.js';
import { envSchema } from '../../src/config.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

describe('the configuration reference (docs/configuration.md)', () => {
  it('has a description for every environment variable of the config schema', () => {
    expect(Object.keys(envSchema.shape).length).toBeGreaterThan(30);
    expect(undocumentedVariables(), 'add .meta({ description }) in src/config.ts').toEqual([]);
  });

  it('names a variable whose schema has no description, or a blank one', () => {
    const variables = {
      DESCRIBED: z.string().optional().meta({ description: 'a described variable' }),
      BARE: z.string().optional(),
      TYPED_ONLY: z.string().optional().meta({ type: 'path' }),
      BLANK: z.string().optional().describe('  '),
    };
    expect(undocumentedVariables(variables)).toEqual(['BARE', 'TYPED_ONLY', 'BLANK']);
  });

  it('is the page the schema renders (regenerate with `npm run docs:config`)', () => {
    const committed = readFileSync(path.join(ROOT, CONFIG_REFERENCE_PATH), 'utf8');
    expect(committed, 'docs/configuration.md is stale: run `npm run docs:config`').toBe(
      configReference(),
    );
  });

  it('lists every variable with its type, default and description, and escapes table cells', () => {
    const page = configReference({
      PORTISH: z
        .string()
        .optional()
        .meta({ type: 'integer 0–9', default: '3', description: 'a|b' }),
      MODE: z.enum(['json', 'pretty']).optional().meta({ description: 'how' }),
      PLAIN: z.string().optional().meta({ description: 'text' }),
    });
    expect(page).toContain('| `PORTISH` | integer 0–9 | 3 | a\\|b |');
    expect(page).toContain('| `MODE` | `json`, `pretty` | — | how |');
    expect(page).toContain('| `PLAIN` | string | — | text |');
  });
});
