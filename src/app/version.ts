import { createRequire } from 'node:module';

/** orgsync's version, from package.json (one place to bump). */
export const VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
