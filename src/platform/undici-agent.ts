/**
 * undici's Agent without the rest of undici. `import { Agent } from 'undici'` evaluates the whole package (fetch,
 * WebSocket, EventSource, the caches and mock agents: 111 files) of which the platform client uses one dispatcher:
 * about 3 MB of heap and 2.5 MB of the node binary's pages in every run (issue 31: the 100,000-member sync).
 *
 * These are undici's own files (its package.json has no "exports" map, so they are importable). The module cache
 * makes this Agent the very class `undici` exports; test/platform/undici-agent.test.ts checks that, so an undici
 * that moves its files fails a test, not a run.
 */
import { createRequire } from 'node:module';
import type { Agent as UndiciAgent } from 'undici';

const requireUndici = createRequire(import.meta.url);

/** undici's Agent (the keep-alive connection pool per origin). */
export const Agent = requireUndici('undici/lib/dispatcher/agent.js') as typeof UndiciAgent;

// undici's index adds request(), stream() and the other API methods to every dispatcher; loaded on its own, the
// Agent has them only once this is done (again when the index is loaded too: the same functions).
const dispatcherPrototype = (requireUndici('undici/lib/dispatcher/dispatcher.js') as { prototype: object }).prototype;
if (!('request' in dispatcherPrototype)) Object.assign(dispatcherPrototype, requireUndici('undici/lib/api/index.js') as object);
