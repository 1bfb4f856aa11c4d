import { z } from 'zod';

// The auth area (issue: discovery, JWKS, token endpoint) fills this in.
/** The auth area's fields of a seed tenant. */
export const authTenantSeedShape = {};
/** The auth area's top-level seed fields. */
export const authSeedShape = {};
export const _authSeedPlaceholder = z.never().optional();
