import type { Command } from 'commander';
import { configJsonSchema } from '../../config/json-schema.js';
import { loadConfig } from '../../config/load.js';
import type { CliContext, CommandResult } from '../context.js';

/** `orgsync config validate` and `orgsync config schema`. */
export function registerConfigCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  const config = program
    .command('config')
    .description('Check a config file, or print the JSON Schema of the config format.')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync config validate --config /etc/orgsync/orgsync.yaml
  $ orgsync config schema > orgsync.schema.json   # then: # yaml-language-server: $schema=./orgsync.schema.json`,
    );

  config
    .command('validate')
    .description('Load and validate a config file (YAML, ${ENV} references, *_file secrets); exit 0 when valid, 2 with the path and the problem when not.')
    .requiredOption('-c, --config <file>', 'config file (YAML)')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync config validate --config config/orgsync.example.yaml
  $ ORGSYNC_API_KEY=ek_... orgsync config validate -c /etc/orgsync/orgsync.yaml

An invalid file prints one line naming the file, the field path and the problem, e.g.
  orgsync: /etc/orgsync/orgsync.yaml: sources[1].members.fields.email: required`,
    )
    .action((opts: { config: string }) => {
      setResult(
        (async () => {
          const cfg = loadConfig(opts.config, ctx.env);
          const sources = cfg.sources.map((s) => `${s.name} (${s.type})`).join(', ');
          ctx.stdout.write(`${cfg.meta.file}: valid\n`);
          ctx.stdout.write(`  platform: ${cfg.platform.base_url}\n`);
          ctx.stdout.write(`  sources: ${cfg.sources.length === 0 ? 'none' : sources}\n`);
          ctx.stdout.write(`  schedule: "${cfg.schedule}" (${cfg.timezone})\n`);
        })(),
      );
    });

  config
    .command('schema')
    .description('Print the JSON Schema (draft 2020-12) of the config file, generated from the validator itself, for editor completion.')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync config schema > orgsync.schema.json
  # first line of a config file, for the YAML language server:
  # yaml-language-server: $schema=./orgsync.schema.json`,
    )
    .action(() => {
      ctx.stdout.write(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
    });
}
