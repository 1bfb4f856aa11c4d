/**
 * The PATCH that completes a new member's create when the source has it suspended (the platform creates members
 * active). An import where one member in twenty is suspended holds fifty thousand of them at a million members, and
 * each written out (ids, description, fields, request, path, dependencies) cost about 500 bytes; this one keeps only
 * its desired member and derives every property from it when read, as source-create.ts does for the create itself.
 * The properties are own enumerable accessors in the order of suspendNewMember's change, so JSON, spreads, digests
 * and comparisons see that change exactly; the member sits in a non-enumerable symbol slot no reader sees.
 */
import type { Change, DesiredMember, PlanRequest, PlanValue } from '../../domain/index.js';
import { normText } from '../normalise.js';
import { keepInSlot } from '../../shared/hidden-slot.js';
import { derived, MEMBER, packedSourceId, packMember, unpackMember, type KeptMember as Kept } from './kept-member.js';

const createIdOf = (k: Kept): string => `members:create:${packedSourceId(k[MEMBER])}`;
const SUSPENDED_REASON = 'status suspended in the source';


/** The change's properties, in suspendNewMember's order (create-member.ts). */
const PROPERTIES: [string, PropertyDescriptor][] = [
  ['id', derived<Kept>(function (this: Kept) { return `members:update:${packedSourceId(this[MEMBER])}`; })],
  ['entity', derived(() => 'members')],
  ['op', derived(() => 'update')],
  ['thirdId', derived<Kept>(function (this: Kept) { return packedSourceId(this[MEMBER]); })],
  ['description', derived<Kept>(function (this: Kept) { return `suspend new member "${normText(unpackMember(this[MEMBER]).display_name)}"`; })],
  ['reason', derived(() => SUSPENDED_REASON)],
  ['fields', derived(suspendedFields)],
  ['request', derived<Kept>(function (this: Kept): PlanRequest { return { method: 'PATCH', path: `/org/members/{ref:${createIdOf(this)}}`, body: suspendedFields() }; })],
  ['dependsOn', derived<Kept>(function (this: Kept) { return [createIdOf(this)]; })],
  ['completes', derived<Kept>(function (this: Kept) { return createIdOf(this); })],
];

function suspendedFields(): Record<string, PlanValue> {
  return { status: 'suspended' };
}

/** Builds the change (a constructor: V8 sizes the object at once); its prototype is Object.prototype, a plain object. */
const SuspendNew = function (this: Kept, member: DesiredMember) {
  for (const [key, descriptor] of PROPERTIES) Object.defineProperty(this, key, descriptor);
  keepInSlot(this, MEMBER, packMember(member));
} as unknown as new (member: DesiredMember) => Change;
SuspendNew.prototype = Object.prototype;

/** The suspension that completes the create of `member` (a new member the source has suspended), in compact form. */
export function suspendNewMemberChange(member: DesiredMember): Change {
  return new SuspendNew(member);
}
