// Types of tools/code-shape.mjs for the TypeScript tests that import it (test/tools/code-shape.test.ts).

/** A function over its line limit. */
export interface LongFunction {
  file: string;
  name: string;
  line: number;
  lines: number;
}

/** Every .ts file below `dir`, sorted. */
export function tsFiles(dir: string): string[];
/** Functions of `file` longer than `limit` lines. */
export function longFunctions(file: string, limit: number, root?: string): LongFunction[];
/** Import cycles among `files`, each as a path list (first file repeated at the end). */
export function importCycles(files: string[], root?: string): string[][];
