import { z } from 'zod';

// The translation area fills this in.
/** The top-level `translate:` block of the seed. */
export const translateSeedSchema = z.looseObject({}).optional();
