import type { Command } from 'commander';
import { loadConfig } from '../../config/load.js';
import { explainRecords, renderExplanations } from '../../daemon/explain.js';
import type { DesiredState } from '../../domain/index.js';
import { TrustStateStore } from '../../mirror/trust-state.js';
import { historyLine, RecordHistory } from '../../mirror/record-history.js';
import { withoutLeaseNote } from '../../mirror/snapshot.js';
import { EXIT, OrgsyncError } from '../../shared/errors.js';
import type { CliContext, CommandResult } from '../context.js';
import { openRunEnvironment } from '../../app/run-environment.js';

/**
 * `orgsync explain --config F <third id | platform id | email>`: where a record comes from, what the mirror holds,
 * whether this sync owns it and since when, and what the next plan would do to it and why (nothing is written).
 */
export function registerExplainCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  program
    .command('explain')
    .description('Explain one record: its source and mapped fields, the mirror, ownership, and what the next plan would do and why.')
    .argument('<key>', 'a third id (source id), a platform id (department/position id, member account_id) or an e-mail')
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .addHelpText(
      'after',
      `
Refreshes the mirror, reads the sources and plans, as \`orgsync plan\` does; nothing is written to the platform.
Exit codes: 0 the record is known (owned, unowned or quarantined), 1 no record matches (or the run failed),
2 config or usage error.

Examples:
  $ orgsync explain --config my-sync.yaml E1042
  $ orgsync explain --config my-sync.yaml nadia.silva@demo-corp.test`,
    )
    .action((key: string, opts: { config: string }) => {
      setResult(
        (async () => {
          const config = loadConfig(opts.config, ctx.env);
          // Read-only: no lease, a snapshot of the state DB (runs beside a daemon or a sync), nothing written to it.
          const env = openRunEnvironment(config, ctx, { logDestination: ctx.stderr, logIsTTY: false, readOnly: true });
          if (env.leaseHolder) ctx.stderr.write(withoutLeaseNote('explain', env.dbPath, env.leaseHolder));
          try {
            let desired: DesiredState | undefined;
            const summary = await env.run({ mode: 'plan', observer: { onPlan: (_p, d) => (desired = d) } }, { signal: ctx.shutdownSignal });
            if (!desired) throw new OrgsyncError('INTERNAL', 'the plan did not report its desired state');
            const found = explainRecords(
              { syncId: config.sync.id, desired, plan: summary.plan, mirror: env.mirror, ownership: env.ownership, trust: new TrustStateStore(env.db, config.sync.id) },
              key,
            );
            if (found.length === 0) {
              throw new OrgsyncError('NOT_FOUND', `no record matches "${key}": not a third id, platform id or e-mail in the sources, the quarantine or the mirror`);
            }
            const departments = env.mirror.snapshot().departments.byId;
            ctx.stdout.write(renderExplanations(found, (id) => departments.get(id)?.path));
            ctx.stdout.write(recentHistoryLines(new RecordHistory(env.db), found));
            return EXIT.OK;
          } finally {
            await env.close();
          }
        })(),
      );
    });
}

/** The last three recorded writes of each explained record (issue 22), newest first. */
function recentHistoryLines(store: RecordHistory, found: readonly { entity: string; thirdId: string; platformId?: string }[]): string {
  const lines: string[] = [];
  for (const e of found) {
    const entries = store.entries({ sourceIds: e.thirdId ? [e.thirdId] : [], platformIds: e.platformId ? [e.platformId] : [] }, { limit: 3 });
    lines.push(`history of ${e.entity} ${e.thirdId || e.platformId || ''} (last 3, newest first):`);
    if (entries.length === 0) lines.push('  no writes recorded');
    for (const h of entries) for (const l of historyLine(h).split('\n')) lines.push(`  ${l}`);
  }
  return `${lines.join('\n')}\n`;
}
