import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../../config/load.js';
import { CHANGE_OPS, ENTITY_KINDS } from '../../domain/index.js';
import { runResultOf, writesOf } from '../../daemon/daemon.js';
import type { RunSummary } from '../../daemon/run-once.js';
import { renderPlanText } from '../../planner/render.js';
import { accountRecords } from '../../planner/report/accounting.js';
import type { DesiredState } from '../../domain/index.js';
import { EXIT, OrgsyncError } from '../../shared/errors.js';
import type { CliContext, CommandResult } from '../context.js';
import { openEmulatorDoor } from '../emulator-door.js';
import { openRunEnvironment } from '../../app/run-environment.js';
import { installedPackage } from '../../app/package-root.js';

/** config/demo/ of the installed package. */
export const DEMO_DIR = join(installedPackage().root, 'config', 'demo');

/** One paragraph of a run's summary, as the demo prints it. */
export function renderRunSummary(summary: RunSummary): string {
  const perEntity = ENTITY_KINDS.map((e) => {
    const parts = CHANGE_OPS.filter((op) => summary.applied[e][op] > 0).map((op) => `${summary.applied[e][op]} ${op}`);
    return `${e}: ${parts.length ? parts.join(', ') : 'none'}`;
  }).join('; ');
  const lines = [
    `Summary: ${writesOf(summary)} writes (${perEntity})`,
    `  result ${summary.result} (exit ${summary.exitCode}) in ${(summary.durationMs / 1000).toFixed(1)} s; ${summary.apiCalls} API calls, ${summary.rateLimited} rate limited (429)`,
    `  ${summary.failures.length} failed, ${summary.quarantined.length} quarantined, ${summary.plan.warnings.length} warnings${summary.error ? `; ${summary.error}` : ''}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** `orgsync demo` (npm start): the emulator in-process, the demo data synced twice. */
export function registerDemoCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  program
    .command('demo')
    .description(
      'See orgsync work with nothing to configure: starts the embedded emulator on a free port with a demo tenant, syncs the sample HR data of config/demo/ (a CSV export and an HRIS JSON payload), prints the plan and the summary, then runs again to show that the second run makes no writes.',
    )
    .option('--keep-running', 'leave the emulator running after the two runs (until Ctrl-C), to explore it with curl')
    .addHelpText(
      'after',
      `
In a checkout, \`npm start\` builds and runs \`orgsync demo\`.

Examples:
  $ orgsync demo
  $ orgsync demo --keep-running   # runs until Ctrl-C; meanwhile: curl -H "Authorization: Bearer ek_demo_4f8a2c9e71b3d6054e2a" <url>/api/external/v1/org/departments`,
    )
    .action((opts: { keepRunning?: boolean }) => {
      setResult(runDemo(ctx, opts.keepRunning === true));
    });
}

async function runDemo(ctx: CliContext, keepRunning: boolean): Promise<number> {
  const out = (s: string) => ctx.stdout.write(s);
  const { loadSeedFile, startEmulator } = await openEmulatorDoor();
  const seedPath = join(DEMO_DIR, 'seed.yaml');
  const seed = loadSeedFile(seedPath);
  const tenant = seed.tenants[0];
  const apiKey = tenant?.api_keys.find((k) => k.scopes.includes('tenant.org.write'))?.key;
  if (!tenant || !apiKey) throw new OrgsyncError('SEED_INVALID', `${seedPath}: the demo seed needs a tenant with a tenant.org.write key`);
  const stateDir = mkdtempSync(join(tmpdir(), 'orgsync-demo-'));
  const emulator = await startEmulator({ seed, host: '127.0.0.1', port: 0 });
  try {
    const env = { ...ctx.env, ORGSYNC_DEMO_URL: emulator.url, ORGSYNC_DEMO_API_KEY: apiKey, ORGSYNC_DEMO_STATE: join(stateDir, 'orgsync.db') };
    const config = loadConfig(join(DEMO_DIR, 'orgsync.yaml'), env);
    out('orgsync demo\n');
    out(`  emulator  ${emulator.url}  (tenant ${tenant.id} "${tenant.name}", seed ${seedPath})\n`);
    out(`  config    ${config.meta.file}\n`);
    out(`  sources   ${config.sources.map((s) => `${s.name} (${s.type})`).join(', ')}\n\n`);
    const run = openRunEnvironment(config, { env }, { logDestination: ctx.stderr, logIsTTY: false });
    let first: RunSummary;
    let second: RunSummary;
    try {
      // The desired state of each run, so its plan accounts for every source record (issue 32).
      let desired: DesiredState | undefined;
      const observer = { onPlan: (_p: unknown, d: DesiredState) => (desired = d) };
      const records = (s: RunSummary) => (desired ? { records: accountRecords(s.plan, desired) } : {});
      out('== Run 1: the first sync of the demo data into an empty tenant ==\n\n');
      first = await run.run({ mode: 'apply', observer }, { signal: ctx.shutdownSignal });
      run.metrics.recordRun(runResultOf(first), Date.parse(first.startedAt), Date.parse(first.startedAt) + first.durationMs);
      out(renderPlanText(first.plan, { quarantine: first.quarantined, ...records(first) }));
      out(`\n${renderRunSummary(first)}\n`);
      out('== Run 2: the same data again ==\n\n');
      second = await run.run({ mode: 'apply', observer }, { signal: ctx.shutdownSignal });
      out(renderPlanText(second.plan, { quarantine: second.quarantined, ...records(second) }));
      out(`\n${renderRunSummary(second)}\n`);
    } finally {
      await run.close();
    }
    const writes = writesOf(second);
    if (first.exitCode !== EXIT.OK || second.exitCode !== EXIT.OK || writes !== 0) {
      out(`The demo did not converge: run 1 ended ${first.result}, run 2 ${second.result} with ${writes} writes.\n`);
      return EXIT.FAILED;
    }
    out(`The second run made 0 writes: the platform matches the HR data, and orgsync only writes differences.\n`);
    // Commands that work verbatim in the checkout after `npm ci && npm start` (no platform, no key needed).
    out(`Next: read the demo's HR data yourself, then follow "Sync your own tenant" in README.md:\n`);
    out(`  npx orgsync sources check --config config/demo/orgsync.yaml\n`);
    if (keepRunning) {
      out(`\nThe emulator keeps running at ${emulator.url} (API key ${apiKey}); Ctrl-C stops it.\n`);
      await new Promise<void>((resolve) => {
        if (ctx.shutdownSignal.aborted) resolve();
        else ctx.shutdownSignal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    return EXIT.OK;
  } finally {
    await emulator.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
