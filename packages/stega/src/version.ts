import { readFileSync } from 'node:fs';

/** This package's version (package.json, beside src/ and dist/). */
export const STEGA_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;
