/**
 * The organisation area: departments, members and positions (spec "Organisation sync"), and the OrgDirectory the
 * other areas read members through.
 */
import type Database from 'better-sqlite3';
import type { EmulatorArea, EmulatorContext } from '../core/types.js';
import { registerOrgRoutes } from './routes.js';
import { migrateOrg, OrgStore } from './store.js';

// One store per emulator instance (several may run in one process, e.g. in tests).
const stores = new WeakMap<Database.Database, OrgStore>();

function storeOf(ctx: EmulatorContext): OrgStore {
  let store = stores.get(ctx.db);
  if (!store) {
    store = new OrgStore(ctx.db, ctx.clock);
    stores.set(ctx.db, store);
    ctx.directory = store;
  }
  return store;
}

/** The organisation area. */
export const orgArea: EmulatorArea = {
  name: 'org',
  migrate: migrateOrg,
  applySeed(ctx) {
    storeOf(ctx).applySeed(ctx.seed);
  },
  routes(app, ctx) {
    registerOrgRoutes(app, ctx, storeOf(ctx));
  },
};

export { OrgStore } from './store.js';
