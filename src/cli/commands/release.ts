import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { Option } from 'commander';
import { loadConfig } from '../../config/load.js';
import { ambiguousEntities, ownershipRunner, planRelease, refreshForOwnership, renderOwnershipDone, renderOwnershipPlan } from '../../daemon/ownership-commands.js';
import type { EntityKind } from '../../domain/index.js';
import { EXIT, OrgsyncError } from '../../shared/errors.js';
import type { CliContext, CommandResult } from '../context.js';
import { openRunEnvironment, ownershipDeps } from '../../app/run-environment.js';

/**
 * `orgsync release --config F <selector>`: gives owned records up (orgsync stops managing them); nothing on the
 * platform is deleted. Prints what it would change first.
 */
export function registerReleaseCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  program
    .command('release')
    .description('Give owned records up: orgsync stops managing them, nothing on the platform is deleted (printed first; --dry-run stops there).')
    .argument('<selector>', 'a third id, a platform id (department/position id, member account_id) or a member\'s e-mail')
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .addOption(new Option('--entity <entity>', 'only this entity (needed when the selector matches records of more than one entity)').choices(['members', 'departments', 'positions']))
    .option('--dry-run', 'print what would be released, change nothing')
    .addHelpText(
      'after',
      `
Members: the ownership record in the state DB is deleted. Departments and positions: metadata.managed_by is removed.
Later syncs leave released records alone (a record still in the sources is reported as not owned).
A selector that matches records of more than one entity (member 100 and department 100) is refused with the list
of matches: name the one meant with --entity.
Exit codes: 0 done, 1 no owned record matches the selector (or failed), 2 config or usage error, or the selector
matches records of more than one entity.

Examples:
  $ orgsync release --config my-sync.yaml E1042 --dry-run
  $ orgsync release --config my-sync.yaml nadia.silva@demo-corp.test`,
    )
    .action((selector: string, opts: { config: string; entity?: EntityKind; dryRun?: boolean }) => {
      setResult(
        (async () => {
          const config = loadConfig(opts.config, ctx.env);
          const env = openRunEnvironment(config, ctx, { logDestination: ctx.stderr, logIsTTY: false });
          try {
            const deps = ownershipDeps(env, ctx);
            await refreshForOwnership(deps);
            const actions = planRelease(deps, selector, opts.entity);
            if (actions.length === 0) throw new OrgsyncError('NOT_FOUND', `no record owned by sync ${config.sync.id} matches "${selector}"`);
            const ambiguous = ambiguousEntities('release', `"${selector}"`, actions);
            if (ambiguous !== undefined) {
              ctx.stderr.write(ambiguous);
              return EXIT.USAGE;
            }
            ctx.stdout.write(renderOwnershipPlan('release', actions));
            // Recorded in the run history (trigger release) when it changes something; a dry run changes nothing.
            if (actions.length > 0) await ownershipRunner({ ...deps, history: env.history, runId: randomUUID() }, opts.dryRun === true)('release', actions);
            ctx.stdout.write(renderOwnershipDone('release', actions.length, opts.dryRun === true));
            return EXIT.OK;
          } finally {
            await env.close();
          }
        })(),
      );
    });
}
