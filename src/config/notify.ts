import { z } from 'zod';
import { httpUrlSchema } from './transport.js';

/** The events a webhook can subscribe to (issue 20). */
export const NOTIFY_EVENTS = ['refused', 'failed', 'partial', 'pending_approval', 'recovered'] as const;
export type NotifyEventKind = (typeof NOTIFY_EVENTS)[number];

const webhookSchema = z
  .strictObject({
    url: httpUrlSchema().describe('Where to POST each event (http or https).'),
    secret: z
      .string()
      .min(1)
      .optional()
      .describe('Key of the HMAC-SHA256 signature of each body, sent as X-Orgsync-Signature: sha256=<hex>. Give it as secret_file (a Secret mount) or "${VAR}".'),
    events: z.array(z.enum(NOTIFY_EVENTS)).min(1).default([...NOTIFY_EVENTS]).describe('Which events to send: refused, failed, partial, pending_approval, recovered.'),
    format: z.enum(['json', 'slack']).default('json').describe('json: the event document; slack: a Slack incoming-webhook message ({"text": ...}) with a short summary and the counts.'),
  })
  .describe('One webhook.');

/** `notify:` — webhooks told about refused, failed and partial runs, pending approvals and recoveries. */
export const notifyConfigSchema = z
  .strictObject({
    webhooks: z.array(webhookSchema).default([]).describe('Webhooks; each gets one POST per event it subscribes to, retried with backoff, never blocking or failing a run.'),
  })
  .describe('Notifications (issue 20): one POST per event, fire and forget.');

export type NotifyConfig = z.infer<typeof notifyConfigSchema>;
export type WebhookConfig = NotifyConfig['webhooks'][number];
