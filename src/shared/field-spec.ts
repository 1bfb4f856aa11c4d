/**
 * The template syntax of field specs, shared by the config's checks and the mapping: `{path}` placeholders, and
 * `{!path}` for one that must be present (issue 45: empty, it empties the whole template). Pure.
 */

/** A placeholder in a template: `{name}` or `{!name}`. */
export const PLACEHOLDER = /\{([^{}]+)\}/g;

/** The name of a placeholder's inside (`name`, `!name`) and whether it must be present (`!`). */
export function placeholderOf(inner: string): { name: string; required: boolean } {
  const t = inner.trim();
  return t.startsWith('!') ? { name: t.slice(1).trim(), required: true } : { name: t, required: false };
}

/** The names one alternative of a field spec reads: itself, or the placeholders of a template. */
export function namesOfSpec(spec: string): string[] {
  if (!spec.includes('{')) return [spec];
  return [...spec.matchAll(PLACEHOLDER)].map((m) => placeholderOf(m[1]!).name);
}
