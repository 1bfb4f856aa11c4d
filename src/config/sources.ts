import { z } from 'zod';

// Placeholder until the connectors issue lands its per-type schemas here.
/** `sources:` — where HR truth comes from. */
export const sourcesConfigSchema = z
  .array(z.looseObject({ name: z.string().min(1), type: z.string().min(1) }))
  .default([])
  .describe('HR sources, merged per entity by source id in this order of precedence.');

export type SourceConfig = z.infer<typeof sourcesConfigSchema>[number];
