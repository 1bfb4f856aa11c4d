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

/** How issue lines name where they are: the file's `line:column` of a path, and the known keys of an object. */
export interface IssueContext {
  /** `file:line:col` of the key at `path` (or of the deepest enclosing one the file has). */
  locate(path: readonly PropertyKey[]): string;
  /** The keys the object at `path` may have, for "did you mean" (undefined: not known). */
  allowedKeys?(path: readonly PropertyKey[]): readonly string[] | undefined;
}

/**
 * One line per issue: `path: problem`, with "required" for a missing value and the key names for unknown keys. With
 * a context, each line starts with the file's `line:column` of the key (`c.yaml:23:7: sources[0].members.fileds:
 * unknown key; did you mean \`fields\`?`).
 */
export function formatZodIssues(error: Pick<z.ZodError, 'issues'>, maxIssues = 10, context?: IssueContext): string[] {
  const lines: string[] = [];
  const at = (path: readonly PropertyKey[]): string => (context ? `${context.locate(path)}: ` : '');
  for (const issue of error.issues.slice(0, maxIssues)) {
    const raw = issue as unknown as { code: string; input?: unknown; keys?: string[]; message: string };
    if (raw.code === 'unrecognized_keys' && raw.keys) {
      const allowed = context?.allowedKeys?.(issue.path) ?? [];
      for (const key of raw.keys) {
        const near = nearestKey(key, allowed);
        lines.push(`${at([...issue.path, key])}${formatPath([...issue.path, key])}: unknown key${near ? `; did you mean \`${near}\`?` : ''}`);
      }
      continue;
    }
    // A missing value of a union (a field mapping is a name, a template or a list) is "required" too, not zod's "Invalid input".
    const missing = (raw.code === 'invalid_type' || raw.code === 'invalid_union') && raw.input === undefined;
    const field = issue.path.at(-2) === 'fields' ? String(issue.path.at(-1)) : undefined;
    const hint = field !== undefined ? ` (map ${field} to the column, attribute or JSON path that holds it)` : '';
    lines.push(`${at(issue.path)}${formatPath(issue.path)}: ${missing ? `required${hint}` : issue.message}`);
  }
  if (error.issues.length > maxIssues) lines.push(`... and ${error.issues.length - maxIssues} more`);
  return lines;
}

/**
 * The allowed key nearest to a misspelt `key`: the fewest single-character edits (insert, delete, replace, swap two
 * neighbours), at most a third of its length (and at least one); undefined when none is that near.
 */
export function nearestKey(key: string, allowed: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.floor(key.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of allowed) {
    const d = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Optimal string alignment distance: Levenshtein plus the swap of two neighbouring characters as one edit. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}
