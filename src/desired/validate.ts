/**
 * Checks across records after the merge: parents that do not exist, cycles, members in unknown departments,
 * contacts shared by several members; and dependants follow a quarantined record with their own reason.
 */
import type { DesiredDepartment, DesiredMember, QuarantineEntry } from '../domain/desired.js';
import { SeenKeys } from './duplicates.js';

function entry(entity: QuarantineEntry['entity'], rec: { source_id: string; origin?: { source: string; location: string } }, reason: string, message: string): QuarantineEntry {
  return { source: rec.origin?.source ?? '', entity, source_id: rec.source_id, location: rec.origin?.location ?? '', reason, message };
}

/**
 * Validates the department tree. `known` are ids of departments quarantined earlier (their children follow them).
 * Returns the departments that pass, parents before children.
 */
export function validateDepartments(departments: DesiredDepartment[], quarantinedIds: Set<string>, quarantine: QuarantineEntry[]): DesiredDepartment[] {
  const byId = new Map(departments.map((d) => [d.source_id, d]));
  const bad = new Map<string, true>();
  // Unknown parents and self-parents.
  for (const d of departments) {
    const p = d.parent_source_id;
    if (p === undefined) continue;
    if (p === d.source_id) {
      quarantine.push(entry('departments', d, 'cycle', `department "${d.source_id}" is its own parent`));
      bad.set(d.source_id, true);
    } else if (!byId.has(p) && !quarantinedIds.has(p)) {
      quarantine.push(entry('departments', d, 'unknown_parent', `parent department "${p}" does not exist`));
      bad.set(d.source_id, true);
    }
  }
  // Cycles: walk up from each department; a walk that comes back to a department on its own path is a cycle.
  const state = new Map<string, 1 | 2>(); // 1 = on the current path, 2 = done
  for (const start of departments) {
    if (state.has(start.source_id)) continue;
    const path: string[] = [];
    let cur: DesiredDepartment | undefined = start;
    while (cur && !state.has(cur.source_id) && !bad.has(cur.source_id)) {
      state.set(cur.source_id, 1);
      path.push(cur.source_id);
      cur = cur.parent_source_id !== undefined ? byId.get(cur.parent_source_id) : undefined;
    }
    if (cur && state.get(cur.source_id) === 1) {
      const ring = path.slice(path.indexOf(cur.source_id));
      const text = [...ring, cur.source_id].map((id) => `"${id}"`).join(' -> ');
      for (const id of ring) {
        quarantine.push(entry('departments', byId.get(id)!, 'cycle', `the department hierarchy has a cycle: ${text}`));
        bad.set(id, true);
      }
    }
    for (const id of path) state.set(id, 2);
  }
  // Dependants: children of quarantined departments, to any depth; emit parents before children.
  const out: DesiredDepartment[] = [];
  const placed = new Set<string>();
  const children = new Map<string, DesiredDepartment[]>();
  const roots: DesiredDepartment[] = [];
  for (const d of departments) {
    if (bad.has(d.source_id)) continue;
    if (d.parent_source_id === undefined) roots.push(d);
    else {
      const list = children.get(d.parent_source_id) ?? [];
      list.push(d);
      children.set(d.parent_source_id, list);
    }
  }
  const stack = [...roots].reverse();
  while (stack.length) {
    const d = stack.pop()!;
    out.push(d);
    placed.add(d.source_id);
    const kids = children.get(d.source_id);
    if (kids) for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
  for (const d of departments) {
    if (bad.has(d.source_id) || placed.has(d.source_id)) continue;
    // Not reachable from a top-level department: some ancestor is quarantined.
    let p = d.parent_source_id!;
    while (byId.has(p) && !bad.has(p) && !quarantinedIds.has(p) && byId.get(p)!.parent_source_id !== undefined) p = byId.get(p)!.parent_source_id!;
    const direct = d.parent_source_id!;
    quarantine.push(entry('departments', d, 'parent_quarantined', direct === p ? `parent department "${direct}" is quarantined` : `parent department "${direct}" is quarantined (its ancestor "${p}" is)`));
  }
  return out;
}

/**
 * Validates members against the departments and each other. `contactsUnique`: the caller knows already that no two
 * of `members` that are not left share an e-mail or phone (one source's batch, checked as it was read).
 */
export function validateMembers(
  members: DesiredMember[],
  departments: { valid: Set<string>; quarantined: Set<string>; checked: boolean },
  quarantine: QuarantineEntry[],
  contactsUnique = false,
): DesiredMember[] {
  const pass: DesiredMember[] = [];
  // One platform account per e-mail or phone: live members sharing one cannot both be synced, and which is right is unknown.
  // Filled in the same pass as the contact and department checks (each record is visited once: 300,000 members make
  // 600,000 values; SeenKeys, not Sets, see duplicates.ts); lists are built only for shared values.
  const emails = new SeenKeys(contactsUnique ? 0 : members.length);
  const phones = new SeenKeys(contactsUnique ? 0 : members.length);
  let sharedEmails: Set<string> | undefined;
  let sharedPhones: Set<string> | undefined;
  for (const m of members) {
    // Checked after the merge: one source may give the e-mail and another the phone.
    if (!m.email && !m.phone) {
      quarantine.push(entry('members', m, 'no_contact', 'member has neither e-mail nor phone (the platform needs one)'));
      continue;
    }
    const d = m.department_source_id;
    if (d !== undefined && departments.checked && !departments.valid.has(d)) {
      if (departments.quarantined.has(d)) quarantine.push(entry('members', m, 'department_quarantined', `department "${d}" is quarantined`));
      else quarantine.push(entry('members', m, 'unknown_department', `department "${d}" does not exist`));
      continue;
    }
    pass.push(m);
    if (contactsUnique || m.status === 'left') continue;
    if (m.email && emails.add(m.email)) (sharedEmails ??= new Set()).add(m.email);
    if (m.phone && phones.add(m.phone)) (sharedPhones ??= new Set()).add(m.phone);
  }
  if (!sharedEmails && !sharedPhones) return pass;
  const shared = new Map<string, DesiredMember[]>();
  const add = (key: string, m: DesiredMember) => {
    const list = shared.get(key);
    if (list) list.push(m);
    else shared.set(key, [m]);
  };
  for (const m of pass) {
    if (m.status === 'left') continue;
    if (m.email && sharedEmails?.has(m.email)) add(`e:${m.email}`, m);
    if (m.phone && sharedPhones?.has(m.phone)) add(`p:${m.phone}`, m);
  }
  const dropped = new Set<DesiredMember>();
  for (const [key, list] of shared) {
    const isEmail = key.startsWith('e:');
    for (const m of list) {
      if (dropped.has(m)) continue;
      dropped.add(m);
      const others = list.filter((o) => o !== m).map((o) => `"${o.source_id}"`);
      const shown = others.slice(0, 3).join(', ') + (others.length > 3 ? ` and ${others.length - 3} more` : '');
      quarantine.push(
        entry('members', m, isEmail ? 'duplicate_email' : 'duplicate_phone', `${isEmail ? 'e-mail' : 'phone'} "${key.slice(2)}" is also used by member ${shown}`),
      );
    }
  }
  return pass.filter((m) => !dropped.has(m));
}
