/**
 * zod schemas of the organisation responses (spec "Resources and their fields"). Tolerant: unknown fields pass
 * through (z.looseObject), so a newer platform does not break the sync; a missing or mistyped required field is an
 * error that names the field.
 */
import { z } from 'zod';
import type { ListPage, PlatformDepartment, PlatformMember, PlatformPosition } from '../domain/entities.js';

const metadata = z.record(z.string(), z.unknown());

/** A Department. */
export const departmentSchema = z.looseObject({
  id: z.string(),
  parent_id: z.string(),
  name: z.string(),
  path: z.string(),
  depth: z.number().int(),
  sort_order: z.number().int(),
  third_department_id: z.string(),
  member_count: z.number().int(),
  metadata,
  status: z.enum(['active', 'deleted']),
  updated_at: z.string(),
});

/** A Member. */
export const memberSchema = z.looseObject({
  account_id: z.string(),
  display_name: z.string(),
  email: z.string(),
  phone: z.string(),
  third_user_id: z.string(),
  title: z.string(),
  department_id: z.string(),
  status: z.enum(['active', 'invited', 'suspended', 'left']),
  roles: z.array(z.string()),
  updated_at: z.string(),
});

/** A Position. */
export const positionSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  sort_order: z.number().int(),
  third_position_id: z.string(),
  is_system: z.boolean(),
  member_count: z.number().int(),
  agent_count: z.number().int(),
  metadata,
  status: z.enum(['active', 'deleted']),
  updated_at: z.string(),
});

/** A list page of `item`. */
export function listPageSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({ items: z.array(item), next_cursor: z.string(), has_more: z.boolean() });
}

/** Compile-time checks that the schemas produce the domain types. */
type Assert<T extends true> = T;
export type _SchemaMatchesDomain = Assert<
  z.infer<typeof departmentSchema> extends PlatformDepartment
    ? z.infer<typeof memberSchema> extends PlatformMember
      ? z.infer<typeof positionSchema> extends PlatformPosition
        ? z.infer<ReturnType<typeof listPageSchema<typeof memberSchema>>> extends ListPage<PlatformMember>
          ? true
          : false
        : false
      : false
    : false
>;
