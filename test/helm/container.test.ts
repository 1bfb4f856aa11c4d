import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../daemon/support.js';

// No container runtime on these machines: the Dockerfile is checked statically (the README says so).
const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

describe('Dockerfile (static checks)', () => {
  it('is multi-stage: a build stage, then a node:22-slim runtime', () => {
    const froms = instructions.filter((l) => l.startsWith('FROM '));
    expect(froms).toEqual(['FROM node:22-slim AS build', 'FROM node:22-slim AS runtime']);
  });

  it('builds with dev dependencies and ships production dependencies only', () => {
    const build = instructions.slice(0, instructions.indexOf('FROM node:22-slim AS runtime'));
    expect(build).toContain('RUN npm ci --no-audit --no-fund');
    expect(build.some((l) => l.includes('npm run build') && l.includes('npm prune --omit=dev'))).toBe(true);
    const runtime = instructions.slice(instructions.indexOf('FROM node:22-slim AS runtime'));
    expect(runtime.filter((l) => l.startsWith('RUN npm'))).toEqual([]);
    expect(runtime).toContain('COPY --from=build /app/node_modules ./node_modules');
    expect(runtime).toContain('COPY --from=build /app/dist ./dist');
  });

  it('runs as a non-root user with the state under a volume, entrypoint node dist/cli.js', () => {
    const runtime = instructions.slice(instructions.indexOf('FROM node:22-slim AS runtime'));
    expect(runtime).toContain('USER 10001:10001');
    expect(runtime).toContain('VOLUME ["/var/lib/orgsync"]');
    expect(runtime).toContain('ENTRYPOINT ["node", "dist/cli.js"]');
    expect(runtime.findIndex((l) => l.startsWith('USER'))).toBeLessThan(runtime.findIndex((l) => l.startsWith('ENTRYPOINT')));
  });

  it('.dockerignore keeps out what the image must not carry, and nothing the build copies', () => {
    const ignored = readFileSync(join(repoRoot, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    for (const p of ['node_modules', 'dist', '.git', 'test', '*.db']) expect(ignored).toContain(p);
    const copied = instructions.filter((l) => l.startsWith('COPY ') && !l.includes('--from')).flatMap((l) => l.split(/\s+/).slice(1, -1));
    expect(copied).toEqual([
      'package.json', 'package-lock.json', 'packages/emulator/package.json', 'tsconfig.json', 'tsconfig.build.json',
      'packages/emulator/tsconfig.json', 'packages/emulator/tsconfig.build.json', 'packages/emulator/src', 'src', 'config',
    ]);
    for (const c of copied) expect(ignored).not.toContain(c);
  });
});
