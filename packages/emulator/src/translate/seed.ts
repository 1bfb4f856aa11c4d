/**
 * The top-level `translate:` block of the emulator seed (README "Document translation API").
 * Strict: an unknown key is an error naming its path. Every field has a default, so `translate:` may be omitted.
 */
import { z } from 'zod';
import { KNOWN_TARGET_LANGUAGES } from './translator.js';

/** Usage a key made through the web application, seeded so `/v1/usage` can show API versus web attribution. */
export const translateWebUsageSchema = z
  .strictObject({
    translations: z.number().int().min(0).default(0).describe('translations made on the web'),
    tokens: z.number().int().min(0).default(0).describe('tokens used on the web'),
    credits: z.number().int().min(0).default(0).describe('credits spent on the web'),
  })
  .describe('usage of this key attributed to the web application');

/** One API key of the translation API (its own keys: nothing is shared with the tenant API's ek_ keys). */
export const translateApiKeySchema = z.strictObject({
  key: z
    .string()
    .min(8, 'a translation API key has at least 8 characters')
    .regex(/^[\x21-\x7e]+$/, 'a translation API key is printable ASCII without spaces')
    .describe('the secret bearer value; stored hashed, logged only as a prefix'),
  credits: z.number().int().min(0).default(1000).describe("the key's available credits"),
  disabled: z.boolean().default(false).describe('a disabled key answers 403 api_key_disabled'),
  name: z.string().min(1).optional().describe('a display name (default: the key prefix)'),
  account: z.string().min(1).default('default').describe('the account the key belongs to; usage lists the keys of one account'),
  web_usage: translateWebUsageSchema.prefault({}),
});

const languageCode = z
  .string()
  .refine((code) => KNOWN_TARGET_LANGUAGES.includes(code), {
    error: (issue) => `the built-in translator does not know ${String(issue.input)} (known: ${KNOWN_TARGET_LANGUAGES.join(', ')})`,
  });

/** The translate block's shape (output type). */
export const translateSeedObject = z.strictObject({
  api_keys: z.array(translateApiKeySchema).default([]).describe('keys of the translation API'),
  max_file_bytes: z.number().int().positive().default(10 * 1024 * 1024).describe('upload limit; larger files answer 413 file_too_large'),
  tokens_per_credit: z.number().int().positive().default(100).describe('tokens one credit buys (at least 1 credit per translation)'),
  queue_ms: z.number().int().min(0).default(1000).describe('time a confirmed translation stays queued'),
  page_ms: z.number().int().min(0).default(1000).describe('time the running translation spends per page'),
  target_languages: z
    .array(languageCode)
    .min(1)
    .optional()
    .describe('allowed target languages (default: every language the built-in translator knows)'),
});

/** The top-level `translate:` block of the seed; omitted means defaults (and no keys). */
export const translateSeedSchema = translateSeedObject
  .superRefine((block, ctx) => {
    const seen = new Map<string, number>();
    block.api_keys.forEach((k, i) => {
      const first = seen.get(k.key);
      // Never echo the key itself in the message: seeds are secrets too.
      if (first !== undefined) ctx.addIssue({ code: 'custom', path: ['api_keys', i, 'key'], message: `duplicate key (same as api_keys[${first}])` });
      else seen.set(k.key, i);
    });
  })
  .prefault({});

/** The parsed `translate:` block. */
export type TranslateSeed = z.output<typeof translateSeedSchema>;
/** One parsed key entry. */
export type TranslateApiKeySeed = z.output<typeof translateApiKeySchema>;
