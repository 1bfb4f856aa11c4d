/**
 * The member create a plan holds for each new member (issue 31): a million-member import holds a million of them, so
 * each keeps only what it is made of (the desired member, and its department's placement: id value, path and
 * dependencies, shared by every create into that department) and derives everything else when read: `fields` (the
 * POST body) from the desired member, as memberCreateFields built it; `id`, `entity`, `op`, `thirdId`,
 * `description` and `request` as memberCreateChange's do; `paths`, `dependsOn` and the usual reasons from the shared
 * values. All are own enumerable accessors in the order of any change, so JSON, spreads, digests and comparisons see
 * a plain change; the two kept values are non-enumerable symbol slots no reader sees. 40 bytes a change, where the
 * create with its own fields object held 136.
 */
import type { Change, DesiredMember, PlanRef, PlanValue } from '../../domain/index.js';
import { MEMBER_CREATE_ACCESSORS, memberCreateFields } from '../../domain/index.js';
import { normEmail, normPhone, normText } from '../normalise.js';
import { keepInSlot } from '../../shared/hidden-slot.js';
import { derived, MEMBER, packedSourceId, packMember, unpackMember, type CreatedMember, type KeptMember } from './kept-member.js';

/** The POST body of a new member: `display_name`, `third_user_id`, then e-mail, phone, title and department when set. */
export function sourceCreateFields(d: CreatedMember, department: string | PlanRef | undefined): Record<string, PlanValue> {
  return memberCreateFields(normText(d.display_name), d.source_id, {
    email: d.email ? normEmail(d.email) : undefined,
    phone: d.phone ? normPhone(d.phone) : undefined,
    title: d.title !== undefined && d.title !== '' ? normText(d.title) : undefined,
    department_id: department,
  });
}

/**
 * What every create into one department shares (its department's id value, path and dependencies), one object per
 * department and plan: a create keeps a pointer to it, not three.
 */
export interface Placement {
  /** The department_id it is created in (a PlanRef to the department's create when new; undefined: none). */
  department: string | PlanRef | undefined;
  paths: Change['paths'] | undefined;
  dependsOn: string[];
}

const PLACEMENT = Symbol('placement');

interface Placed extends KeptMember {
  [PLACEMENT]: Placement;
}

const THIRD_ID = derived<Placed>(function () {
  return packedSourceId(this[MEMBER]);
});
const FIELDS = derived<Placed>(function () {
  return sourceCreateFields(unpackMember(this[MEMBER]), this[PLACEMENT].department);
});
const PATHS = derived<Placed>(function () {
  return this[PLACEMENT].paths;
});
const DEPENDS_ON = derived<Placed>(function () {
  return this[PLACEMENT].dependsOn;
});
const MISSING = 'missing on the platform';
const REHIRE = 're-hire: the member left and is in the source again';
/** The reason of most creates, and of a re-hire's: read from the descriptor, no slot per change. */
const REASONS: Record<string, PropertyDescriptor> = { [MISSING]: derived(() => MISSING), [REHIRE]: derived(() => REHIRE) };

/** What a new member's create is made of. */
export interface SourceCreateInit {
  member: DesiredMember;
  placement: Placement;
  /** A re-hire: the account this sync owned before the member left. */
  platformId: string | undefined;
  reason: string;
}

/**
 * Builds the create (a constructor: V8 sizes the object to its slots at once). Its prototype is Object.prototype, so
 * it is a plain object to every reader (`constructor === Object`). Two slots (the member and its placement), 40 bytes.
 */
const SourceCreate = function (this: Change & Placed, init: SourceCreateInit) {
  const a = MEMBER_CREATE_ACCESSORS;
  Object.defineProperty(this, 'id', a.id);
  Object.defineProperty(this, 'entity', a.entity);
  Object.defineProperty(this, 'op', a.op);
  Object.defineProperty(this, 'thirdId', THIRD_ID);
  if (init.platformId !== undefined) this.platformId = init.platformId;
  Object.defineProperty(this, 'description', a.description);
  if (init.placement.paths !== undefined) Object.defineProperty(this, 'paths', PATHS);
  const reason = REASONS[init.reason];
  if (reason !== undefined) Object.defineProperty(this, 'reason', reason);
  else this.reason = init.reason;
  Object.defineProperty(this, 'fields', FIELDS);
  Object.defineProperty(this, 'request', a.request);
  Object.defineProperty(this, 'dependsOn', DEPENDS_ON);
  keepInSlot(this, MEMBER, packMember(init.member));
  keepInSlot(this, PLACEMENT, init.placement);
} as unknown as new (init: SourceCreateInit) => Change;
SourceCreate.prototype = Object.prototype;

/** The create of a new member, in the compact form above. */
export function sourceCreateChange(init: SourceCreateInit): Change {
  return new SourceCreate(init);
}
