/**
 * The configuration reference, docs/configuration.md, rendered from the zod schema of the
 * environment (envSchema in src/config.ts): one row per variable with its type, default and
 * description, each taken from the variable's `.meta()`. `npm run docs:config` writes the
 * page; test/docs/configuration-reference.test.ts fails when it is stale or when a variable
 * has no description.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { envSchema } from '../src/config.js';

/** Where the page lives, from the repository's root. */
export const CONFIG_REFERENCE_PATH = 'docs/configuration.md';

type Variables = Record<string, z.ZodType>;

interface VariableDoc {
  name: string;
  type: string;
  default: string;
  description: string;
}

function metaOf(schema: z.ZodType): Record<string, unknown> {
  return (z.globalRegistry.get(schema) as Record<string, unknown> | undefined) ?? {};
}

/** An enum's values, through `.optional()`; null for anything else. */
function enumValues(schema: z.ZodType): string[] | null {
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
  return inner instanceof z.ZodEnum ? inner.options.map(String) : null;
}

function docOf(name: string, schema: z.ZodType): VariableDoc {
  const meta = metaOf(schema);
  const values = enumValues(schema);
  const text = (key: string) => (typeof meta[key] === 'string' ? (meta[key] as string).trim() : '');
  return {
    name,
    type: text('type') || (values ? values.map((v) => `\`${v}\``).join(', ') : 'string'),
    default: text('default') || '—',
    description: text('description'),
  };
}

/** The variables of `variables` that have no description (none, for a complete schema). */
export function undocumentedVariables(variables: Variables = envSchema.shape): string[] {
  return Object.entries(variables)
    .filter(([name, schema]) => docOf(name, schema).description === '')
    .map(([name]) => name);
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/** The page, as `npm run docs:config` writes it. */
export function configReference(variables: Variables = envSchema.shape): string {
  const rows = Object.entries(variables).map(([name, schema]) => {
    const doc = docOf(name, schema);
    return `| \`${doc.name}\` | ${cell(doc.type)} | ${cell(doc.default)} | ${cell(doc.description)} |`;
  });
  return `# Configuration reference

<!-- Generated from packages/stega/src/config.ts by \`npm run docs:config\`: edit the schema's
     descriptions there, not this page. -->

Stega reads its configuration from environment variables, once, when a process starts
(\`loadConfig\` in \`packages/stega/src/config.ts\`; nothing else reads \`process.env\`). Every
value is validated: a bad one stops the process with a message naming the variable.

| variable | type | default | description |
|---|---|---|---|
${rows.join('\n')}

Compose reads three more of its own (\`POSTGRES_PASSWORD\`, \`STEGA_HTTP_PORT\`,
\`STEGA_IMAGE\`): see [Deploy with containers](operations.md#deploy-with-containers).
`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  writeFileSync(path.join(root, CONFIG_REFERENCE_PATH), configReference());
  console.log(`wrote ${CONFIG_REFERENCE_PATH}`);
}
