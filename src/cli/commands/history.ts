import type { Command } from 'commander';
import { Option } from 'commander';
import { loadConfig } from '../../config/load.js';
import { parseDuration } from '../../config/platform.js';
import { historyJson, historyKeysFor, historyLine, RecordHistory } from '../../mirror/record-history.js';
import { withoutLeaseNote } from '../../mirror/snapshot.js';
import { EXIT, OrgsyncError } from '../../shared/errors.js';
import type { CliContext, CommandResult } from '../context.js';
import { openRunEnvironment } from '../../app/run-environment.js';

/** `orgsync history --config F SELECTOR [--since DURATION] [--output text|json]` (issue 22): the writes to one record, newest first. */
export function registerHistoryCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  program
    .command('history')
    .description('Show every write orgsync made to one record, newest first: run, trigger, operation, fields (old -> new), result.')
    .argument('<selector>', 'a source id, a platform id, an e-mail or a department path')
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .option('--since <duration>', 'only writes of the last DURATION (e.g. 24h, 7d)')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .addHelpText(
      'after',
      `
Reads the state DB only (nothing is refreshed or written); contact values are masked. Entries older than
state.history_days (default 90) are pruned at the end of every run.
Exit codes: 0 (also when nothing was recorded for the record), 2 config or usage error.

Examples:
  $ orgsync history --config my-sync.yaml E1042
  $ orgsync history --config my-sync.yaml nadia.silva@demo-corp.test --since 7d --output json`,
    )
    .action((selector: string, opts: { config: string; since?: string; output: 'text' | 'json' }) => {
      setResult(
        (async () => {
          const config = loadConfig(opts.config, ctx.env);
          let since: number | undefined;
          if (opts.since !== undefined) {
            const ms = parseDuration(opts.since);
            if (ms === undefined) throw new OrgsyncError('USAGE', `--since ${JSON.stringify(opts.since)}: expected a duration such as 24h, 7d or 90m`);
            since = ms;
          }
          const env = openRunEnvironment(config, ctx, { logDestination: ctx.stderr, logIsTTY: false, readOnly: true });
          if (env.leaseHolder) ctx.stderr.write(withoutLeaseNote('history', env.dbPath, env.leaseHolder));
          try {
            const keys = historyKeysFor(selector, env.mirror, env.ownership);
            const entries = new RecordHistory(env.db).entries(keys, since !== undefined ? { since: env.clock.now() - since } : {});
            if (opts.output === 'json') ctx.stdout.write(`${JSON.stringify({ selector, entries: entries.map(historyJson) }, null, 2)}\n`);
            else if (entries.length === 0) ctx.stdout.write(`no writes recorded for "${selector}"${opts.since ? ` in the last ${opts.since}` : ''}\n`);
            else ctx.stdout.write(`${entries.map(historyLine).join('\n')}\n`);
            return EXIT.OK;
          } finally {
            await env.close();
          }
        })(),
      );
    });
}
