/**
 * System notifications (POST /notifications/agent-conversation) and proactive chat messages (POST /chat/messages).
 * Both take only an ek_ key with their scope (an administrator JWT, like every JWT and session token, is refused
 * with 403), check the target user and agent, and use the direct conversation of that user and agent. A notification
 * is delivered to the desktop client only; a chat message is written to the conversation's history.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError, badRequest, envelope } from '../core/errors.js';
import type { Agent, DirectoryMember, EmulatorContext, Principal, RouteAuth } from '../core/types.js';
import { codePointLength, isoTime, UUID_PATTERN } from '../kb/ids.js';
import { parseOr400, principalOf, stringError } from '../kb/validation.js';
import type { EmpRegistry } from './emp-registry.js';
import type { MessagingStore } from './store.js';

const PREFIX = '/api/external/v1';

/** Notifications: ek_ with tenant.notification.write only. */
export const NOTIFICATION_WRITE: RouteAuth = { apiKey: 'tenant.notification.write', shape: 'envelope' };
/** Chat messages: ek_ with tenant.chat.message.write only. */
export const CHAT_WRITE: RouteAuth = { apiKey: 'tenant.chat.message.write', shape: 'envelope' };
/** The fault switch that makes delivery to the messaging backend fail (502). */
export const CHAT_DELIVERY_FAILURE_SWITCH = 'chat_delivery_failure';

const uuid = z.string(stringError).regex(UUID_PATTERN, 'must be a UUID');

/** A string whose length in characters (code points) is within [min, max]. */
function text(min: number, max: number) {
  return z
    .string(stringError)
    .refine((s) => codePointLength(s) >= min && codePointLength(s) <= max, min > 0 ? `must be ${min} to ${max} characters` : `must be at most ${max} characters`);
}

const notificationBody = z.strictObject({
  user_id: uuid,
  agent_id: uuid,
  title: text(1, 80),
  description: text(1, 1000),
  third_notification_id: text(0, 128).optional(),
});

const chatBody = z.strictObject({
  target: z.strictObject({
    type: z.literal('agent_conversation', { error: 'must be agent_conversation' }),
    user_id: uuid,
    agent_id: uuid,
  }),
  message: z.strictObject({
    blocks: z.array(z.unknown(), { error: 'must be an array of EMP blocks' }).min(1, 'must hold at least one block').max(50, 'must hold at most 50 blocks'),
  }),
});

/** Refuses an administrator credential (the spec: "an administrator JWT is refused"). */
function refuseAdmin(principal: Principal): void {
  if (principal.admin) throw new ApiError(403, 'scope_denied', 'an administrator credential is refused here');
}

/**
 * The target of a notification or message: an active member of the tenant (else 400), and an agent of the tenant
 * (unknown: 404; deleted: 400) that the member can see (else 400).
 */
export function resolveTarget(ctx: EmulatorContext, tenantId: number, userId: string, agentId: string, where = ''): { member: DirectoryMember; agent: Agent } {
  const member = ctx.directory.memberByAccountId(tenantId, userId);
  if (!member || member.tenant_id !== tenantId) throw badRequest(`${where}user_id: not a member of the tenant`);
  if (member.status !== 'active') throw badRequest(`${where}user_id: the member is ${member.status === 'left' ? 'deleted' : member.status}, not active`);
  const agent = ctx.agents.byId(tenantId, agentId);
  if (!agent) throw new ApiError(404, 'not_found', `${where}agent_id: no such digital employee in this tenant`);
  if (agent.status !== 'active') throw badRequest(`${where}agent_id: the digital employee is deleted`);
  const visible = agent.visible_to === 'all' || agent.visible_to.some((e) => e.toLowerCase() === member.email.toLowerCase());
  if (!visible) throw badRequest(`${where}agent_id: the digital employee is not visible to the user`);
  return { member, agent };
}

/** Registers the notification and chat routes. */
export function registerMessagingRoutes(app: FastifyInstance, ctx: EmulatorContext, store: MessagingStore, registry: EmpRegistry): void {
  app.post(
    `${PREFIX}/notifications/agent-conversation`,
    { config: { errorShape: 'envelope' as const }, onRequest: ctx.authorize(NOTIFICATION_WRITE) },
    async (req) => {
      const principal = principalOf(req);
      refuseAdmin(principal);
      const body = parseOr400(notificationBody, req.body);
      resolveTarget(ctx, principal.tenantId, body.user_id, body.agent_id);
      const conversation = store.directConversation(principal.tenantId, body.user_id, body.agent_id);
      const notificationId = randomUUID();
      // Delivered to the desktop client only: nothing goes into the conversation's chat history.
      store.addNotification({
        notification_id: notificationId,
        tenant_id: principal.tenantId,
        conversation_id: conversation.conversation_id,
        room_id: conversation.room_id,
        user_id: body.user_id,
        agent_id: body.agent_id,
        title: body.title,
        description: body.description,
        third_notification_id: body.third_notification_id ?? null,
        created_at: ctx.clock.now(),
      });
      return envelope(req, { notification_id: notificationId, conversation_id: conversation.conversation_id, room_id: conversation.room_id });
    },
  );

  app.post(`${PREFIX}/chat/messages`, { config: { errorShape: 'envelope' as const }, onRequest: ctx.authorize(CHAT_WRITE) }, async (req) => {
    const principal = principalOf(req);
    refuseAdmin(principal);
    const body = parseOr400(chatBody, req.body);
    body.message.blocks.forEach((block, i) => {
      const problem = registry.check(block);
      if (problem) throw badRequest(`message.blocks[${i}]${problem.path}: ${problem.message}`);
    });
    resolveTarget(ctx, principal.tenantId, body.target.user_id, body.target.agent_id, 'target.');
    if (ctx.switches.get(CHAT_DELIVERY_FAILURE_SWITCH)) {
      throw new ApiError(502, 'delivery_failed', 'delivery to the messaging backend failed');
    }
    const conversation = store.directConversation(principal.tenantId, body.target.user_id, body.target.agent_id);
    const message = store.addMessage(conversation.conversation_id, principal.tenantId, body.target.agent_id, body.message.blocks);
    return envelope(req, {
      message_id: message.message_id,
      conversation_id: conversation.conversation_id,
      room_id: conversation.room_id,
      created_at: isoTime(message.created_at),
    });
  });
}
