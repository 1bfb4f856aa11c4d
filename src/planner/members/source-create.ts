/**
 * The member create a plan holds for each new member (issue 31): a million-member import holds a million of them, so
 * each keeps only what it is made of (the desired member, its department's id value, path and dependencies, its
 * reason) and derives everything else when read: `fields` (the POST body) from the desired member, as
 * memberCreateFields built it; `id`, `entity`, `op`, `thirdId`, `description` and `request` as memberCreateChange's
 * do. All are own enumerable accessors in the order of any change, so JSON, spreads, digests and comparisons see a
 * plain change; the two kept values are non-enumerable symbol slots no reader sees. 64 bytes a change, where the
 * create with its own fields object held 136.
 */
import type { Change, DesiredMember, PlanRef, PlanValue } from '../../domain/index.js';
import { MEMBER_CREATE_ACCESSORS, memberCreateFields } from '../../domain/index.js';
import { normEmail, normPhone, normText } from '../normalise.js';

const MEMBER = Symbol('member');
const DEPARTMENT = Symbol('department');

interface Kept {
  [MEMBER]: DesiredMember;
  [DEPARTMENT]: string | PlanRef | undefined;
}

/** The POST body of a new member: `display_name`, `third_user_id`, then e-mail, phone, title and department when set. */
export function sourceCreateFields(d: DesiredMember, department: string | PlanRef | undefined): Record<string, PlanValue> {
  return memberCreateFields(normText(d.display_name), d.source_id, {
    email: d.email ? normEmail(d.email) : undefined,
    phone: d.phone ? normPhone(d.phone) : undefined,
    title: d.title !== undefined && d.title !== '' ? normText(d.title) : undefined,
    department_id: department,
  });
}

const THIRD_ID: PropertyDescriptor = {
  get(this: Kept): string {
    return this[MEMBER].source_id;
  },
  enumerable: true,
  configurable: true,
};
const FIELDS: PropertyDescriptor = {
  get(this: Kept): Record<string, PlanValue> {
    return sourceCreateFields(this[MEMBER], this[DEPARTMENT]);
  },
  enumerable: true,
  configurable: true,
};
const SLOT: PropertyDescriptor = { value: undefined, writable: true, enumerable: false, configurable: true };

/** What a new member's create is made of. */
export interface SourceCreateInit {
  member: DesiredMember;
  /** The department_id it is created in (a PlanRef to the department's create when new). */
  department: string | PlanRef | undefined;
  /** A re-hire: the account this sync owned before the member left. */
  platformId: string | undefined;
  paths: Change['paths'] | undefined;
  reason: string;
  dependsOn: string[];
}

/**
 * Builds the create (a constructor: V8 sizes the object to its slots at once). Its prototype is Object.prototype, so
 * it is a plain object to every reader (`constructor === Object`).
 */
const SourceCreate = function (this: Change & Kept, init: SourceCreateInit) {
  const a = MEMBER_CREATE_ACCESSORS;
  Object.defineProperty(this, 'id', a.id);
  Object.defineProperty(this, 'entity', a.entity);
  Object.defineProperty(this, 'op', a.op);
  Object.defineProperty(this, 'thirdId', THIRD_ID);
  if (init.platformId !== undefined) this.platformId = init.platformId;
  Object.defineProperty(this, 'description', a.description);
  if (init.paths !== undefined) this.paths = init.paths;
  this.reason = init.reason;
  Object.defineProperty(this, 'fields', FIELDS);
  Object.defineProperty(this, 'request', a.request);
  this.dependsOn = init.dependsOn;
  SLOT.value = init.member;
  Object.defineProperty(this, MEMBER, SLOT);
  SLOT.value = init.department;
  Object.defineProperty(this, DEPARTMENT, SLOT);
  SLOT.value = undefined;
} as unknown as new (init: SourceCreateInit) => Change;
SourceCreate.prototype = Object.prototype;

/** The create of a new member, in the compact form above. */
export function sourceCreateChange(init: SourceCreateInit): Change {
  return new SourceCreate(init);
}
