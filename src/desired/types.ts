/** Config shapes the pure mapping needs (re-exported so desired/ reads them from one place). */
import type { z } from 'zod';
import type { departmentFieldsSchema, memberFieldsSchema, positionFieldsSchema } from '../config/sources.js';

/** Department field specs. */
export type DepartmentFieldsConfig = z.infer<typeof departmentFieldsSchema>;
/** Position field specs. */
export type PositionFieldsConfig = z.infer<typeof positionFieldsSchema>;
/** Member field specs. */
export type MemberFieldsConfig = z.infer<typeof memberFieldsSchema>;
