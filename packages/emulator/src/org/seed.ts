import { z } from 'zod';

/** Seed: a member that already belongs to the tenant. */
export const seedMemberSchema = z.strictObject({
  display_name: z.string().min(1),
  email: z.string().optional(),
  phone: z.string().optional(),
  title: z.string().optional(),
  third_user_id: z.string().optional(),
  roles: z.array(z.string()).default(['tenant.member']),
  /** Fixed account id (UUID); generated when absent. */
  account_id: z.string().optional(),
});

/** Seed: an ek_ API key with its scopes. */
export const seedApiKeySchema = z.strictObject({
  key: z.string().regex(/^ek_[A-Za-z0-9]+_[A-Za-z0-9]+$/, 'an API key has the form ek_<prefix>_<secret>'),
  scopes: z.array(z.string()).default([]),
});

/** The org area's fields of a seed tenant. */
export const orgTenantSeedShape = {
  id: z.number().int().positive(),
  name: z.string().min(1),
  api_keys: z.array(seedApiKeySchema).default([]),
  members: z.array(seedMemberSchema).default([]),
};
