/**
 * The Dockerfile, checked without a container engine (none on these machines): its structure, every path it copies,
 * and for each target (the default, and `demo`) a production-only install done the way its stages do it, in a temp
 * folder: the deps stage's COPY and `npm ci` lines, then the files the target copies from the build. The CLI of that
 * folder must run `node dist/cli.js --version` with the image's ENV (its NODE_OPTIONS too); the default target must
 * lack the emulator and its packages.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { EMULATOR_MISSING_MESSAGE } from '../../src/cli/emulator-door.js';
import { VERSION } from '../../src/cli/version.js';
import { ensureBuilt, repoRoot } from '../helpers/build.js';
import { tempDir } from '../helpers/temp.js';

const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'))
  .map((l) => l.replace(/\s+/g, ' '));

interface Stage {
  name: string;
  from: string;
  lines: string[];
}

const stages: Stage[] = [];
for (const line of instructions) {
  const from = /^FROM (\S+) AS (\S+)$/.exec(line);
  if (from) stages.push({ name: from[2]!, from: from[1]!, lines: [] });
  else if (line.startsWith('FROM ')) throw new Error(`a FROM without a stage name: ${line}`);
  else stages.at(-1)?.lines.push(line);
}
const stage = (name: string): Stage => {
  const s = stages.find((x) => x.name === name);
  if (!s) throw new Error(`no stage ${name}`);
  return s;
};

interface Copy {
  from?: string;
  sources: string[];
  dest: string;
}
const copiesOf = (s: Stage): Copy[] =>
  s.lines
    .filter((l) => l.startsWith('COPY '))
    .map((l) => {
      const words = l.split(' ').slice(1);
      const from = words[0]?.startsWith('--from=') ? words.shift()!.slice('--from='.length) : undefined;
      return { ...(from ? { from } : {}), sources: words.slice(0, -1), dest: words.at(-1)! };
    });

/** The emulator's runtime-only packages, which the default target must not carry. */
const EMULATOR_ONLY = ['fastify', '@fastify/formbody', '@fastify/multipart', 'ajv', 'pdf-lib', 'unpdf', '@orgsync/emulator'];

/** The stage whose node_modules a target copies. */
const depsStageOf = (target: string): string => copiesOf(stage(target)).find((c) => c.sources.includes('/app/node_modules'))!.from!;

describe('Dockerfile (static checks)', () => {
  it('stages on node:24-slim; the default target (the last stage) is runtime, and demo is a target of its own', () => {
    expect(stages.map((s) => `${s.name} < ${s.from}`)).toEqual([
      'toolchain < node:24-slim',
      'build < toolchain',
      'prod-deps < toolchain',
      'demo-deps < toolchain',
      'base < node:24-slim',
      'demo < base',
      'runtime < base',
    ]);
  });

  it('builds with dev dependencies; the targets run no npm and take production dependencies only', () => {
    expect(stage('build').lines).toContain('RUN npm ci --no-audit --no-fund');
    expect(stage('build').lines).toContain('RUN npm run build');
    expect(stage('prod-deps').lines.filter((l) => l.startsWith('RUN '))).toEqual(['RUN npm ci --omit=dev --workspaces=false --no-audit --no-fund']);
    expect(stage('demo-deps').lines.filter((l) => l.startsWith('RUN '))).toEqual(['RUN npm ci --omit=dev --no-audit --no-fund']);
    for (const target of ['runtime', 'demo']) {
      expect(stage(target).lines.filter((l) => l.startsWith('RUN '))).toEqual([]);
      expect(stage(target).lines).toContain('COPY --from=build /app/dist ./dist');
    }
    expect(depsStageOf('runtime')).toBe('prod-deps');
    expect(depsStageOf('demo')).toBe('demo-deps');
  });

  it('the default target carries no part of the emulator; demo adds the built package', () => {
    const mentions = (s: Stage) => s.lines.filter((l) => l.includes('packages/emulator'));
    expect(mentions(stage('runtime'))).toEqual([]);
    expect(mentions(stage('prod-deps'))).toEqual([]);
    expect(stage('demo').lines).toContain('COPY --from=build /app/packages/emulator/package.json ./packages/emulator/package.json');
    expect(stage('demo').lines).toContain('COPY --from=build /app/packages/emulator/dist ./packages/emulator/dist');
    expect(stage('demo-deps').lines).toContain('COPY packages/emulator/package.json ./packages/emulator/package.json');
  });

  it('both targets run as a non-root user with the state under a volume, entrypoint node dist/cli.js', () => {
    for (const target of ['runtime', 'demo']) {
      const lines = stage(target).lines;
      expect(lines).toContain('USER 10001:10001');
      expect(lines).toContain('VOLUME ["/var/lib/orgsync"]');
      expect(lines).toContain('ENTRYPOINT ["node", "dist/cli.js"]');
      expect(lines.findIndex((l) => l.startsWith('USER'))).toBeLessThan(lines.findIndex((l) => l.startsWith('ENTRYPOINT')));
    }
    expect(stage('base').lines).toContain('ENV NODE_ENV=production');
    // The young generation the chart's nodeSemiSpaceMiB also sets, to the same default (its NODE_OPTIONS replaces this one).
    const chartDefault = (parse(readFileSync(join(repoRoot, 'helm/orgsync/values.yaml'), 'utf8')) as { nodeSemiSpaceMiB: number }).nodeSemiSpaceMiB;
    expect(stage('base').lines).toContain(`ENV NODE_OPTIONS=--max-semi-space-size=${chartDefault}`);
    expect(stage('runtime').lines).toContain('CMD ["--help"]');
    expect(stage('demo').lines).toContain('CMD ["demo"]');
  });

  it('every path it copies exists: in the repository, or made by the stage it is copied from', () => {
    const missing: string[] = [];
    for (const s of stages) {
      for (const c of copiesOf(s)) {
        for (const src of c.sources) {
          if (!c.from) {
            if (!existsSync(join(repoRoot, src))) missing.push(`${s.name}: COPY ${src}`);
            continue;
          }
          // From a stage: copied into it (or into a stage it is built on), or made by its npm ci (node_modules) or build (dist).
          const made = (st: Stage): boolean =>
            copiesOf(st).some((cc) => cc.sources.some((x) => `/app/${x}` === src || join('/app', cc.dest) === src || join('/app', cc.dest, x) === src)) ||
            (src === '/app/node_modules' && st.lines.some((l) => l.startsWith('RUN npm ci'))) ||
            (/^\/app\/(packages\/emulator\/)?dist$/.test(src) && st.lines.some((l) => l.includes('npm run build'))) ||
            (stages.some((p) => p.name === st.from) && made(stage(st.from)));
          if (!made(stage(c.from))) missing.push(`${s.name}: COPY --from=${c.from} ${src}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('.dockerignore keeps out what the image must not carry, and nothing the build copies', () => {
    const ignored = readFileSync(join(repoRoot, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    for (const p of ['node_modules', '**/node_modules', 'dist', '**/dist', '.git', 'test', 'packages/*/test', '*.db']) expect(ignored).toContain(p);
    const copied = stages.flatMap((s) => copiesOf(s).filter((c) => !c.from).flatMap((c) => c.sources));
    expect([...new Set(copied)]).toEqual([
      'package.json', 'package-lock.json', 'packages/emulator/package.json', 'tsconfig.json', 'tsconfig.build.json',
      'packages/emulator/tsconfig.json', 'packages/emulator/tsconfig.build.json', 'packages/emulator/src', 'src', 'tools/bundle.mjs', 'config',
    ]);
    for (const c of copied) expect(ignored).not.toContain(c);
  });
});

/**
 * A target's /app, made here: the deps stage's COPY lines from the repository and its `npm ci` line (with
 * --prefer-offline: the packages come from npm's cache, filled by the checkout's own npm ci; --ignore-scripts, and
 * better-sqlite3's native build taken from the checkout: compiling it takes minutes here, and it is the same version),
 * then the target's other copies, from the repository's build.
 */
function assembleTarget(target: string): string {
  const app = tempDir(`orgsync-image-${target}-`);
  const deps = stage(depsStageOf(target));
  const place = (src: string, dest: string, many: boolean) => {
    const to = many || dest.endsWith('/') ? join(app, dest, src.split('/').at(-1)!) : join(app, dest);
    cpSync(join(repoRoot, src), to, { recursive: true });
  };
  for (const c of copiesOf(deps)) for (const src of c.sources) place(src, c.dest, c.sources.length > 1);
  for (const run of deps.lines.filter((l) => l.startsWith('RUN '))) {
    const [cmd, ...args] = run.slice('RUN '.length).split(' ');
    expect(cmd).toBe('npm');
    const r = spawnSync('npm', [...args, '--prefer-offline', '--ignore-scripts'], { cwd: app, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  }
  cpSync(join(repoRoot, 'node_modules', 'better-sqlite3', 'build'), join(app, 'node_modules', 'better-sqlite3', 'build'), { recursive: true });
  for (const c of copiesOf(stage(target))) {
    if (c.from === deps.name) continue; // already here
    for (const src of c.sources) {
      const rel = c.from ? src.replace(/^\/app\//, '') : src;
      cpSync(join(repoRoot, rel), join(app, c.dest), { recursive: true });
    }
  }
  return app;
}

/** The environment a target's container gets from its stages' ENV lines (`ENV NAME=value`, one a line). */
function imageEnv(target: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (let st: Stage | undefined = stage(target); st; st = stages.find((p) => p.name === st!.from)) {
    for (const l of st.lines) {
      const m = /^ENV ([A-Z_]+)=(.*)$/.exec(l);
      if (m && !(m[1]! in env)) env[m[1]!] = m[2]!;
    }
  }
  return env;
}

/** `node dist/cli.js ...args` in an assembled target, with the image's environment (its NODE_OPTIONS included). */
function run(app: string, target: string, args: string[]) {
  return spawnSync(process.execPath, ['dist/cli.js', ...args], { cwd: app, encoding: 'utf8', env: { ...process.env, ...imageEnv(target) } });
}

describe('Dockerfile targets, installed for production here', () => {
  const apps: Record<string, string> = {};
  beforeAll(() => {
    ensureBuilt();
    for (const target of ['runtime', 'demo']) apps[target] = assembleTarget(target);
  }, 600_000);
  afterAll(() => {
    for (const app of Object.values(apps)) rmSync(app, { recursive: true, force: true });
  });

  it("the image's environment is what these runs get: NODE_ENV and the young generation's NODE_OPTIONS, which node accepts", () => {
    for (const target of ['runtime', 'demo']) expect(imageEnv(target)).toEqual({ NODE_ENV: 'production', NODE_OPTIONS: '--max-semi-space-size=4' });
  });

  it('default target: node dist/cli.js --version runs, the emulator and its packages are absent, emulator says so in one line', () => {
    const app = apps.runtime!;
    const r = run(app, 'runtime', ['--version']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${VERSION}\n`);
    expect(existsSync(join(app, 'packages'))).toBe(false);
    expect(EMULATOR_ONLY.filter((p) => existsSync(join(app, 'node_modules', p)))).toEqual([]);
    const e = run(app, 'runtime', ['emulator', '--port', '0', '--seed', 'config/seed.example.yaml']);
    expect(e.status).toBe(1);
    expect(e.stderr).toBe(`orgsync: ${EMULATOR_MISSING_MESSAGE}\n`);
  });

  it('demo target: node dist/cli.js --version runs, and the emulator starts from the installed package', async () => {
    const app = apps.demo!;
    const r = run(app, 'demo', ['--version']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${VERSION}\n`);
    for (const p of EMULATOR_ONLY) expect(existsSync(join(app, 'node_modules', p)), p).toBe(true);
    const child = spawn(process.execPath, ['dist/cli.js', 'emulator', '--port', '0', '--seed', 'config/seed.example.yaml'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...imageEnv('demo') } });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out);
      });
      void exited.then(() => reject(new Error(`the emulator exited: ${stderr}`)));
    });
    expect(line).toMatch(/^orgsync emulator listening on http:\/\/127\.0\.0\.1:\d+\n$/);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);
});
