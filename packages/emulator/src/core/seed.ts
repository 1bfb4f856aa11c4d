/**
 * The one seed schema of the emulator (YAML or JSON), composed from each area's piece. Strict: an unknown key is
 * an error naming its path. README "Emulator seed" documents every key.
 */
import { z } from 'zod';
import { orgTenantSeedShape } from '../org/seed.js';
import { authSeedShape, authTenantSeedShape } from '../auth/seed.js';
import { kbSeedShape, kbTenantSeedShape } from '../kb/seed.js';
import { translateSeedSchema } from '../translate/seed.js';

/** A digital employee (agent) of a tenant. */
export const seedAgentSchema = z.strictObject({
  id: z.uuid(),
  name: z.string().min(1),
  status: z.enum(['active', 'deleted']).default('active'),
  /** `all`, or the e-mails of members who can see the agent. */
  visible_to: z.union([z.literal('all'), z.array(z.string())]).default('all'),
  /** Knowledge bases associated with the agent (ids of seeded KBs). */
  knowledge_base_ids: z.array(z.string()).default([]),
});

export const seedTenantSchema = z.strictObject({
  ...orgTenantSeedShape,
  ...authTenantSeedShape,
  ...kbTenantSeedShape,
  agents: z.array(seedAgentSchema).default([]),
});

/** Requests per second; 0 turns a limit off. */
export const seedLimitsSchema = z.strictObject({
  per_api_key: z.number().min(0).default(100),
  per_session_token: z.number().min(0).default(50),
  per_tenant: z.number().min(0).default(500),
  per_client_id: z.number().min(0).default(10),
});

export const seedSchema = z.strictObject({
  tenants: z.array(seedTenantSchema).default([]),
  limits: seedLimitsSchema.default({ per_api_key: 100, per_session_token: 50, per_tenant: 500, per_client_id: 10 }),
  ...authSeedShape,
  ...kbSeedShape,
  translate: translateSeedSchema,
});

export type Seed = z.infer<typeof seedSchema>;
export type SeedTenant = z.infer<typeof seedTenantSchema>;
