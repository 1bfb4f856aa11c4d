/**
 * The EMP block registry of POST /chat/messages, from the seed: each block type has a status and a JSON Schema of its
 * fields beyond `type`, compiled once with ajv (strict mode). Checking is strict: an unknown type, a type whose status
 * is not `stable`, a field the schema does not declare, or a field of the wrong shape refuses the whole message.
 * Nothing falls back to another type and nothing is flattened to text.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { SeedError } from '../core/seed-error.js';
import type { EmpBlockEntry } from '../kb/seed.js';

interface CompiledBlock {
  status: EmpBlockEntry['status'];
  validate: ValidateFunction;
}

/** Why a block was refused: the path below the block (`.text`, `` for the block) and a message. */
export interface BlockProblem {
  path: string;
  message: string;
}

function describe(error: ErrorObject): BlockProblem {
  const path = error.instancePath.replace(/\/(\d+)(?=\/|$)/g, '[$1]').replace(/\//g, '.');
  if (error.keyword === 'additionalProperties') {
    return { path, message: `unknown property: ${String((error.params as { additionalProperty: string }).additionalProperty)}` };
  }
  if (error.keyword === 'required') {
    return { path: `${path}.${String((error.params as { missingProperty: string }).missingProperty)}`, message: 'required' };
  }
  return { path, message: error.message ?? 'invalid' };
}

/** The compiled registry of one emulator. */
export class EmpRegistry {
  private readonly blocks = new Map<string, CompiledBlock>();

  constructor(entries: readonly EmpBlockEntry[]) {
    const ajv = new Ajv({ strict: true, allErrors: false });
    entries.forEach((entry, i) => {
      if (this.blocks.has(entry.type)) throw new SeedError(`seed: emp_block_registry[${i}].type: duplicate block type ${entry.type}`);
      const schema: Record<string, unknown> = { ...entry.schema };
      if (schema.type !== 'object') throw new SeedError(`seed: emp_block_registry[${i}].schema.type: must be "object"`);
      // Strict checking: fields the schema does not declare are refused unless the schema says otherwise.
      if (!('additionalProperties' in schema)) schema.additionalProperties = false;
      let validate: ValidateFunction;
      try {
        validate = ajv.compile(schema);
      } catch (err) {
        throw new SeedError(`seed: emp_block_registry[${i}].schema: ${(err as Error).message}`);
      }
      this.blocks.set(entry.type, { status: entry.status, validate });
    });
  }

  /** The status of a registered type, or undefined. */
  statusOf(type: string): EmpBlockEntry['status'] | undefined {
    return this.blocks.get(type)?.status;
  }

  /** Checks one block; undefined when it is accepted. */
  check(block: unknown): BlockProblem | undefined {
    if (block === null || typeof block !== 'object' || Array.isArray(block)) return { path: '', message: 'must be an object' };
    const { type, ...fields } = block as Record<string, unknown>;
    if (type === undefined) return { path: '.type', message: 'required' };
    if (typeof type !== 'string') return { path: '.type', message: 'must be a string' };
    const entry = this.blocks.get(type);
    if (!entry) return { path: '.type', message: `unknown block type ${type}` };
    if (entry.status !== 'stable') return { path: '.type', message: `block type ${type} is ${entry.status}; only stable block types are accepted` };
    if (entry.validate(fields)) return undefined;
    const first = entry.validate.errors?.[0];
    return first ? describe(first) : { path: '', message: 'invalid' };
  }
}
