import type { Command } from 'commander';
import { configJsonSchema } from '../../config/json-schema.js';
import { accessSync, constants, statSync } from 'node:fs';
import { loadConfig, resolveConfigPath } from '../../config/load.js';
import { fileLocator } from '../../config/locate.js';
import { formatPath } from '../../config/zod-errors.js';
import { apiKeyShapeWarnings } from '../../config/platform.js';
import { insecureTransportWarnings } from '../../config/transport.js';
import type { Config } from '../../config/schema.js';
import { EXIT } from '../../shared/errors.js';
import { redactUrl } from '../../shared/redact.js';
import type { CliContext, CommandResult } from '../context.js';

/**
 * Every file the config names that cannot be read: each source's `file`s, `ca_file` and any other `*_file` (secret
 * files are read while loading), as `c.yaml:7:7: sources[0].members.file: cannot read /abs/path: ENOENT` (the file's
 * line and column of the key). URLs are not fetched.
 */
export function missingFiles(cfg: Config): string[] {
  const problems: string[] = [];
  let locate: ((path: readonly PropertyKey[]) => string) | undefined;
  const at = (path: (string | number)[]): string => {
    locate ??= fileLocator(cfg.meta.file);
    return `${locate(path)}: ${formatPath(path)}`;
  };
  const visit = (node: unknown, path: (string | number)[]): void => {
    if (Array.isArray(node)) node.forEach((v, i) => visit(v, [...path, i]));
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
        if (typeof value === 'string' && value !== '' && (key === 'file' || key.endsWith('_file'))) {
          const abs = resolveConfigPath(cfg, value);
          try {
            accessSync(abs, constants.R_OK);
            if (statSync(abs).isDirectory()) problems.push(`${at([...path, key])}: ${abs} is a folder, not a file`);
          } catch (err) {
            problems.push(`${at([...path, key])}: cannot read ${abs}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
          }
        } else visit(value, [...path, key]);
      }
    }
  };
  visit(cfg.sources, ['sources']);
  return problems;
}

/** `orgsync config validate` and `orgsync config schema`. */
export function registerConfigCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  const config = program
    .command('config')
    .description('Check a config file, or print the JSON Schema of the config format.')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync config validate --config my-sync.yaml
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
  $ ORGSYNC_API_KEY=ek_... orgsync config validate -c my-sync.yaml

An invalid file prints one line per problem, naming the file, the line and column, the field path and the problem, e.g.
  orgsync: /etc/orgsync/orgsync.yaml:23:7: sources[0].members.fileds: unknown key; did you mean \`fields\`?
  orgsync: /etc/orgsync/orgsync.yaml:31:7: sources[1].members.fields.id: required (map id to the column, attribute or JSON path that holds it)`,
    )
    .action((opts: { config: string }) => {
      setResult(
        (async () => {
          // A config error prints one line per problem, as in every command (src/cli/main.ts).
          const cfg = loadConfig(opts.config, ctx.env);
          const missing = missingFiles(cfg);
          if (missing.length > 0) {
            for (const m of missing) ctx.stderr.write(`orgsync: ${m}\n`);
            return EXIT.USAGE;
          }
          // A key of the wrong shape still loads (the platform is the judge), but is named before it is used.
          for (const w of apiKeyShapeWarnings(cfg.platform)) ctx.stderr.write(`orgsync: warning: ${cfg.meta.file}: ${w}\n`);
          for (const w of insecureTransportWarnings(cfg)) ctx.stderr.write(`orgsync: warning: ${cfg.meta.file}: ${w}\n`);
          const sources = cfg.sources.map((s) => `${s.name} (${s.type})`).join(', ');
          ctx.stdout.write(`${cfg.meta.file}: valid\n`);
          ctx.stdout.write(`  platform: ${redactUrl(cfg.platform.base_url)}\n`);
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
