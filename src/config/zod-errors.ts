import type { z } from 'zod';

/** Renders a zod path as `sources[1].members.fields.email`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out || '(root)';
}

/** One line per issue: `path: problem`, with "required" for a missing value and the key names for unknown keys. */
export function formatZodIssues(error: z.ZodError, maxIssues = 10): string[] {
  const lines: string[] = [];
  for (const issue of error.issues.slice(0, maxIssues)) {
    const raw = issue as unknown as { code: string; input?: unknown; keys?: string[]; message: string };
    if (raw.code === 'unrecognized_keys' && raw.keys) {
      for (const key of raw.keys) lines.push(`${formatPath([...issue.path, key])}: unknown key`);
      continue;
    }
    // A missing value of a union (a field mapping is a name, a template or a list) is "required" too, not zod's "Invalid input".
    const missing = (raw.code === 'invalid_type' || raw.code === 'invalid_union') && raw.input === undefined;
    const field = issue.path.at(-2) === 'fields' ? String(issue.path.at(-1)) : undefined;
    const hint = field !== undefined ? ` (map ${field} to the column, attribute or JSON path that holds it)` : '';
    lines.push(`${formatPath(issue.path)}: ${missing ? `required${hint}` : issue.message}`);
  }
  if (error.issues.length > maxIssues) lines.push(`... and ${error.issues.length - maxIssues} more`);
  return lines;
}
