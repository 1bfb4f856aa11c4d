import { randomUUID } from 'node:crypto';
import { openMemberStage } from '../../mirror/member-stage.js';
import type { Command } from 'commander';
import { Option } from 'commander';
import { loadConfig } from '../../config/load.js';
import { ambiguousEntities, ownershipRunner, planAdoption, refreshForOwnership, renderOwnershipDone, renderOwnershipPlan, type AdoptMatch } from '../../daemon/ownership-commands.js';
import type { EntityKind } from '../../domain/index.js';
import { openRunEnvironment, ownershipDeps } from '../../app/run-environment.js';
import { readDesiredState } from '../../sources/index.js';
import { EXIT } from '../../shared/errors.js';
import type { CliContext, CommandResult } from '../context.js';

/**
 * `orgsync adopt --config F --match email|phone|third-id [--entity members|departments|positions] [--dry-run]`:
 * takes over the unowned platform records that match a record of the sources; prints them first.
 */
export function registerAdoptCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  program
    .command('adopt')
    .description('Take over unowned platform records that match a source record (printed first; --dry-run stops there).')
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .addOption(new Option('--match <key>', 'what must match: email or phone (members), third-id (any entity)').choices(['email', 'phone', 'third-id']).makeOptionMandatory())
    .addOption(new Option('--entity <entity>', 'which records (default: members; with --match third-id, whichever entity matches, and it must be one)').choices(['members', 'departments', 'positions']))
    .option('--dry-run', 'print what would be adopted, change nothing')
    .addHelpText(
      'after',
      `
Members are recorded as owned in the state DB; departments and positions get metadata.managed_by = sync.id.
Every adoption is logged. The next sync then patches what differs from the sources.
--match third-id without --entity looks at every entity; when records of more than one entity match, nothing is
adopted and the matches are listed: name the entity with --entity.
Exit codes: 0 done (or nothing to adopt), 1 failed, 2 config or usage error, or --match third-id matches records of
more than one entity.

Examples:
  $ orgsync adopt --config my-sync.yaml --match email --dry-run
  $ orgsync adopt --config my-sync.yaml --match third-id --entity departments`,
    )
    .action((opts: { config: string; match: AdoptMatch; entity?: EntityKind; dryRun?: boolean }) => {
      setResult(
        (async () => {
          const config = loadConfig(opts.config, ctx.env);
          const env = openRunEnvironment(config, ctx, { logDestination: ctx.stderr, logIsTTY: false });
          try {
            const deps = ownershipDeps(env, ctx);
            await refreshForOwnership(deps);
            const desired = await readDesiredState(config, { env: ctx.env, logger: env.logger, clock: env.clock, signal: ctx.shutdownSignal, stage: openMemberStage(env.db) });
            const entities: EntityKind[] = opts.entity !== undefined ? [opts.entity] : opts.match === 'third-id' ? ['members', 'departments', 'positions'] : ['members'];
            const actions = entities.flatMap((entity) => planAdoption(deps, desired, opts.match, entity));
            const ambiguous = ambiguousEntities('adopt', '--match third-id', actions);
            if (ambiguous !== undefined) {
              ctx.stderr.write(ambiguous);
              return EXIT.USAGE;
            }
            ctx.stdout.write(renderOwnershipPlan('adopt', actions));
            // Recorded in the run history (trigger adopt) when it changes something; a dry run changes nothing.
            if (actions.length > 0) await ownershipRunner({ ...deps, history: env.history, runId: randomUUID() }, opts.dryRun === true)('adopt', actions);
            ctx.stdout.write(renderOwnershipDone('adopt', actions.length, opts.dryRun === true));
            return EXIT.OK;
          } finally {
            await env.close();
          }
        })(),
      );
    });
}
