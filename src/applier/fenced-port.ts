/**
 * The platform port as the applier uses it: every call carries the apply's stop (checked right before each attempt,
 * retries included, and ending backoff waits) and its abort signal (requests on the wire).
 */
import type { CallOptions, OrgPlatformPort } from '../platform/port.js';

/** Wraps `port` so that every call gets `options` (a caller's own options are merged over them). */
export function fencedPort(port: OrgPlatformPort, options: CallOptions): OrgPlatformPort {
  const o = (extra?: CallOptions): CallOptions => (extra ? { ...options, ...extra } : options);
  return {
    listPage: (entity, params, extra) => port.listPage(entity, params, o(extra)),
    listDepartments: (params, extra) => port.listDepartments(params, o(extra)),
    getDepartment: (id, extra) => port.getDepartment(id, o(extra)),
    createDepartment: (body, extra) => port.createDepartment(body, o(extra)),
    patchDepartment: (id, body, extra) => port.patchDepartment(id, body, o(extra)),
    deleteDepartment: (id, extra) => port.deleteDepartment(id, o(extra)),
    listMembers: (params, extra) => port.listMembers(params, o(extra)),
    getMember: (id, extra) => port.getMember(id, o(extra)),
    createMember: (body, extra) => port.createMember(body, o(extra)),
    patchMember: (id, body, extra) => port.patchMember(id, body, o(extra)),
    deleteMember: (id, extra) => port.deleteMember(id, o(extra)),
    listPositions: (params, extra) => port.listPositions(params, o(extra)),
    getPosition: (id, extra) => port.getPosition(id, o(extra)),
    createPosition: (body, extra) => port.createPosition(body, o(extra)),
    patchPosition: (id, body, extra) => port.patchPosition(id, body, o(extra)),
    deletePosition: (id, extra) => port.deletePosition(id, o(extra)),
  };
}
