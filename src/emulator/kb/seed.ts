import { z } from 'zod';

// The knowledge/memory/messaging/audit area fills this in.
/** That area's fields of a seed tenant. */
export const kbTenantSeedShape = {};
/** That area's top-level seed fields (e.g. the EMP block registry). */
export const kbSeedShape = {};
export const _kbSeedPlaceholder = z.never().optional();
