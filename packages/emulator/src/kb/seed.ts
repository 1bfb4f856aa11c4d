/**
 * The knowledge / memory / messaging area's part of the emulator seed: knowledge bases (tenant-level and users'
 * private ones) with their documents, memories, and (top level) the EMP block registry of the chat endpoint.
 * README "Knowledge bases, memory, notifications, chat, audit" documents every key.
 */
import { z } from 'zod';

/** Supported document types (what the ingestion can read). */
export const SUPPORTED_MIME_TYPES = ['text/plain', 'text/markdown', 'application/pdf'] as const;

/** A seeded document: text content, chunked while seeding (status `ready` at start). */
export const seedDocumentSchema = z.strictObject({
  /** Fixed id (UUID); derived from the KB id and the title when absent. */
  id: z.guid().optional(),
  title: z.string().min(1),
  mime_type: z.enum(['text/plain', 'text/markdown']).default('text/plain'),
  content: z.string(),
});

/** A seeded knowledge base. A `private` one is a user's personal KB and needs an owner. */
export const seedKnowledgeBaseSchema = z
  .strictObject({
    /** Fixed id (UUID); derived from the tenant id and the name when absent. */
    id: z.guid().optional(),
    name: z.string().min(1),
    description: z.string().default(''),
    /** Default: `personal` for visibility `private`, else `tenant`. */
    space_kind: z.enum(['tenant', 'personal']).optional(),
    visibility: z.enum(['tenant', 'private', 'workspace']).default('tenant'),
    /** The creator of a personal KB: the e-mail of a seeded member. */
    owner_email: z.string().optional(),
    status: z.enum(['active', 'pending', 'failed']).default('active'),
    documents: z.array(seedDocumentSchema).default([]),
  })
  .refine((kb) => (kb.space_kind ?? (kb.visibility === 'private' ? 'personal' : 'tenant')) === 'tenant' || kb.owner_email !== undefined, {
    message: 'a personal (private) knowledge base needs owner_email',
    path: ['owner_email'],
  });

/** The four memory scopes. */
export const MEMORY_SCOPES = ['user_long_term', 'agent_private', 'session', 'group_shared'] as const;
/** One memory scope. */
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

/** A seeded memory of a digital employee. */
export const seedMemorySchema = z.strictObject({
  id: z.string().min(1).optional(),
  scope: z.enum(MEMORY_SCOPES),
  /** The user the memory belongs to (account id); for group_shared / agent_private: its author. */
  user_id: z.string().min(1),
  agent_id: z.string().min(1),
  /** Required for scope `session`. */
  session_id: z.string().default(''),
  /** Required for scope `group_shared`. */
  group_id: z.string().default(''),
  content: z.string().min(1),
})
  .refine((m) => m.scope !== 'session' || m.session_id !== '', { message: 'a session memory needs session_id', path: ['session_id'] })
  .refine((m) => m.scope !== 'group_shared' || m.group_id !== '', { message: 'a group_shared memory needs group_id', path: ['group_id'] });

/** This area's fields of a seed tenant. */
export const kbTenantSeedShape = {
  knowledge_bases: z.array(seedKnowledgeBaseSchema).default([]),
  memories: z.array(seedMemorySchema).default([]),
};

/** One entry of the EMP block registry: a block type, its status and the JSON Schema of its fields. */
export const seedEmpBlockSchema = z.strictObject({
  type: z.string().min(1),
  status: z.enum(['stable', 'beta', 'deprecated']),
  /**
   * JSON Schema (draft 2020-12 / draft-07 keywords ajv supports) of the block's fields beyond `type`. It must describe
   * an object; when it does not say `additionalProperties`, unknown fields are refused (strict checking).
   */
  schema: z.record(z.string(), z.unknown()),
});

/** The registry the emulator uses when the seed has none. */
export const defaultEmpBlockRegistry: z.infer<typeof seedEmpBlockSchema>[] = [
  {
    type: 'text',
    status: 'stable',
    schema: { type: 'object', required: ['text'], properties: { text: { type: 'string', minLength: 1, maxLength: 4000 } } },
  },
  {
    type: 'markdown',
    status: 'stable',
    schema: { type: 'object', required: ['content'], properties: { content: { type: 'string', minLength: 1, maxLength: 8000 } } },
  },
  {
    type: 'image',
    status: 'stable',
    schema: {
      type: 'object',
      required: ['url'],
      properties: { url: { type: 'string', pattern: '^https://' }, alt: { type: 'string', maxLength: 200 } },
    },
  },
  {
    type: 'link',
    status: 'stable',
    schema: {
      type: 'object',
      required: ['text', 'url'],
      properties: { text: { type: 'string', minLength: 1, maxLength: 200 }, url: { type: 'string', pattern: '^https?://' } },
    },
  },
  {
    type: 'card',
    status: 'beta',
    schema: {
      type: 'object',
      required: ['title'],
      properties: { title: { type: 'string', minLength: 1, maxLength: 100 }, description: { type: 'string', maxLength: 1000 } },
    },
  },
  {
    type: 'plain',
    status: 'deprecated',
    schema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
  },
];

/** This area's top-level seed fields. */
export const kbSeedShape = {
  /** The EMP block registry of POST /chat/messages (default: `defaultEmpBlockRegistry`). */
  emp_block_registry: z.array(seedEmpBlockSchema).default(defaultEmpBlockRegistry),
};

/** A seeded knowledge base, as parsed. */
export type SeedKnowledgeBase = z.infer<typeof seedKnowledgeBaseSchema>;
/** A seeded memory, as parsed. */
export type SeedMemory = z.infer<typeof seedMemorySchema>;
/** One EMP block registry entry, as parsed. */
export type EmpBlockEntry = z.infer<typeof seedEmpBlockSchema>;
