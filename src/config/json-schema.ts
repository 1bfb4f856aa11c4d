import { z } from 'zod';
import { SECRET_KEYS } from './load.js';
import { configSchema } from './schema.js';

type JsonObject = Record<string, unknown>;

/** Adds `<key>_file` beside every secret-bearing property, since the loader accepts that form for each secret. */
function addSecretFileVariants(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) addSecretFileVariants(item);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const obj = node as JsonObject;
  const props = obj.properties as JsonObject | undefined;
  if (props && typeof props === 'object') {
    for (const key of Object.keys(props)) {
      if (SECRET_KEYS.has(key) && !(`${key}_file` in props)) {
        props[`${key}_file`] = { type: 'string', description: `Path of a file holding ${key} (e.g. a Kubernetes Secret mount); give either ${key} or ${key}_file.` };
      }
    }
  }
  for (const value of Object.values(obj)) addSecretFileVariants(value);
}

/**
 * `platform.api_keys[]` entries take `key` or `key_file` (the loader reads the file into `key`): the schema lists both
 * and requires one of them.
 */
function addApiKeyFileVariant(schema: JsonObject): void {
  const platform = (schema.properties as JsonObject | undefined)?.platform as JsonObject | undefined;
  const apiKeys = (platform?.properties as JsonObject | undefined)?.api_keys as JsonObject | undefined;
  const item = apiKeys?.items as JsonObject | undefined;
  const props = item?.properties as JsonObject | undefined;
  if (!item || !props) return;
  props.key_file = { type: 'string', description: 'Path of a file holding the key (e.g. a Kubernetes Secret mount); give either key or key_file.' };
  delete item.required;
  item.oneOf = [{ required: ['key'] }, { required: ['key_file'] }];
}

/**
 * The config file's JSON Schema (draft 2020-12), generated from the one zod schema, for editor completion
 * (`# yaml-language-server: $schema=...`). Input mode: fields with defaults are optional, as in the file.
 * `draft-7` is for the Helm chart's values.schema.json (Helm's validator).
 */
export function configJsonSchema(options: { target?: 'draft-2020-12' | 'draft-7' } = {}): JsonObject {
  const schema = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any', target: options.target ?? 'draft-2020-12' }) as JsonObject;
  addSecretFileVariants(schema);
  addApiKeyFileVariant(schema);
  return {
    ...schema,
    title: 'orgsync config',
    description: 'The orgsync config file (YAML). Secrets may be given as ${ENV} references or as <key>_file paths.',
  };
}
