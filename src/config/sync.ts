import { z } from 'zod';

// Placeholder until the reconcile issue lands its schema here.
/** `sync:` — what the reconcile may do. */
export const syncConfigSchema = z
  .looseObject({
    id: z.string().min(1).default('orgsync').describe('This sync\'s id; written to metadata.managed_by of what it creates.'),
  })
  .default({ id: 'orgsync' })
  .describe('Reconcile behaviour: ownership, policy and guards.');

export type SyncConfig = z.infer<typeof syncConfigSchema>;
