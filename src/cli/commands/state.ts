import type { Command } from 'commander';
import { loadConfig } from '../../config/load.js';
import { stateDbOptionsFrom } from '../../daemon/pipeline/options.js';
import { backupStateDb, restoreStateDb, type StateFileFacts } from '../../mirror/backup.js';
import { EXIT } from '../../shared/errors.js';
import type { CliContext, CommandResult } from '../context.js';

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** What a copy holds, for the closing line of backup and restore. */
function describeFacts(f: StateFileFacts): string {
  return `schema version ${f.schemaVersion}, ${plural(f.ownedMembers, 'owned member')}, ${plural(f.runs, 'recorded run')}${f.syncIds.length > 0 ? `, sync id ${f.syncIds.join(', ')}` : ''}`;
}

/**
 * `orgsync state backup FILE` and `orgsync state restore FILE`: a consistent copy of the state DB (member ownership,
 * grace counters, source baselines, run history) taken while a daemon may hold it, and putting one back.
 */
export function registerStateCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  const state = program
    .command('state')
    .description('The state DB (state.path): member ownership, grace counters, source baselines and run history, which the platform cannot give back. Back it up; restore it after a loss.')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync state backup --config my-sync.yaml orgsync-$(date +%F).db
  $ orgsync state restore --config my-sync.yaml orgsync-$(date +%F).db`,
    );

  state
    .command('backup')
    .description('Write a consistent copy of the state DB to FILE (SQLite online backup): safe while a daemon or a sync holds the state DB; FILE is replaced only once the copy is complete.')
    .argument('<file>', 'where to write the copy (replaced if it exists)')
    .requiredOption('-c, --config <file>', 'config file (YAML); its state.path names the state DB')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync state backup orgsync-$(date +%F).db --config my-sync.yaml

Exit codes: 0 written, 1 failed (no state DB, cannot write FILE), 2 config or usage error.`,
    )
    .action((file: string, opts: { config: string }) => {
      setResult(
        (async () => {
          const config = loadConfig(opts.config, ctx.env);
          const { path: dbPath, busyTimeoutMs } = stateDbOptionsFrom(config);
          const result = await backupStateDb(dbPath, file, { busyTimeoutMs });
          ctx.stdout.write(`Backed up ${dbPath} to ${file} (${describeFacts(result)}; ${result.bytes} bytes).\n`);
          return EXIT.OK;
        })(),
      );
    });

  state
    .command('restore')
    .description('Put the backup FILE in place of the state DB. Refused while another process holds the state DB\'s lease (stop the daemon first); FILE must be an orgsync state DB of this sync.id and a schema version this orgsync knows. The state DB is replaced in one transaction; the state it replaces is kept beside it as <state.path>.before-restore.')
    .argument('<file>', 'a file written by `orgsync state backup`')
    .requiredOption('-c, --config <file>', 'config file (YAML); its state.path names the state DB')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync state restore orgsync-$(date +%F).db --config my-sync.yaml

Exit codes: 0 restored, 1 refused because another process holds the lease (it is named) or failed,
2 FILE is not a usable orgsync state DB (BACKUP_INVALID), or a config or usage error.`,
    )
    .action((file: string, opts: { config: string }) => {
      setResult(
        (async () => {
          const config = loadConfig(opts.config, ctx.env);
          const { path: dbPath, busyTimeoutMs, leaseTtlMs } = stateDbOptionsFrom(config);
          const result = await restoreStateDb(dbPath, file, { syncId: config.sync.id, busyTimeoutMs, leaseTtlMs });
          ctx.stdout.write(`Restored ${file} into ${dbPath} (${describeFacts(result)}).\n`);
          if (result.previous) ctx.stdout.write(`The state it replaced was saved to ${result.previous}.\n`);
          return EXIT.OK;
        })(),
      );
    });
}
