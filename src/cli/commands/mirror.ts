import type { Command } from 'commander';
import { loadConfig, resolveConfigPath } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { refreshMirror, type RefreshMirrorResult } from '../../daemon/refresh-mirror.js';
import { openStateDb } from '../../mirror/db.js';
import { Mirror, type EntitySyncState, type StatusCount } from '../../mirror/mirror.js';
import { openStateSnapshot, withoutLeaseNote } from '../../mirror/snapshot.js';
import { createPlatformClient, type PlatformClient } from '../../platform/client.js';
import { KEY_DROPPED_MESSAGE } from '../../platform/key-pool.js';
import { isPlatformError, platformFailure } from '../../platform/errors.js';
import { createLogger, wantsPretty } from '../../observability/logger.js';
import { systemClock } from '../../shared/clock.js';
import { OrgsyncError } from '../../shared/errors.js';
import type { CliContext, CommandResult } from '../context.js';

/** `orgsync mirror status` and `orgsync mirror refresh`: the local mirror of the platform's organisation. */
export function registerMirrorCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  const mirror = program
    .command('mirror')
    .description('The local SQLite mirror of the platform\'s departments, members and positions (state.path).')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync mirror status --config my-sync.yaml
  $ orgsync mirror refresh --config my-sync.yaml --full`,
    );

  mirror
    .command('status')
    .description('Print the mirror\'s record counts by entity and status, its watermarks and its last walks (reads only the state DB).')
    .requiredOption('-c, --config <file>', 'config file (YAML); needs platform: and state:')
    .option('--json', 'print one JSON document instead of text')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync mirror status --config my-sync.yaml
  $ orgsync mirror status -c my-sync.yaml --json | jq '.counts'`,
    )
    .action((opts: { config: string; json?: boolean }) => {
      setResult(
        (async () => {
          const cfg = loadConfig(opts.config, ctx.env);
          const path = resolveConfigPath(cfg, cfg.state.path);
          // A snapshot, no lease: status runs beside a daemon or a sync and never writes the state DB.
          const snapshot = openStateSnapshot(path, { busyTimeoutMs: cfg.state.busy_timeout });
          const { db, holder } = snapshot;
          if (holder) ctx.stderr.write(withoutLeaseNote('mirror status', path, holder));
          try {
            const m = new Mirror(db);
            const counts = m.counts();
            const states = m.states();
            if (opts.json) ctx.stdout.write(`${JSON.stringify({ path, counts, states }, null, 2)}\n`);
            else ctx.stdout.write(renderStatus(path, counts, states));
          } finally {
            snapshot.close();
          }
        })(),
      );
    });

  mirror
    .command('refresh')
    .description('Bring the mirror up to date from the platform: an incremental walk (updated_since = watermark - overlap), or a full walk when there is no watermark, the last full walk is older than state.full_walk_every, or --full is given.')
    .requiredOption('-c, --config <file>', 'config file (YAML); needs platform: and state:')
    .option('--full', 'take a full walk of every entity (and remove records the walk does not see)')
    .addHelpText(
      'after',
      `
Examples:
  $ orgsync mirror refresh --config my-sync.yaml
  $ orgsync mirror refresh --config my-sync.yaml --full`,
    )
    .action((opts: { config: string; full?: boolean }) => {
      setResult(
        (async () => {
          const cfg = loadConfig(opts.config, ctx.env);
          const result = await runRefresh(cfg, ctx, opts.full === true);
          ctx.stdout.write(renderRefresh(result));
        })(),
      );
    });
}

async function runRefresh(cfg: Config, ctx: CliContext, full: boolean): Promise<RefreshMirrorResult> {
  const logger = createLogger({
    level: cfg.log.level,
    destination: ctx.stderr,
    pretty: wantsPretty(cfg.log.format, ctx.isTTY),
    secrets: cfg.meta.secrets,
    redactPaths: cfg.log.redact,
  });
  const client: PlatformClient = createPlatformClient(
    cfg.platform,
    { observer: { onKeyDropped: (key, status, code) => logger.warn({ key, status, code: code || undefined, keys_left: client.activeKeys().length }, KEY_DROPPED_MESSAGE) } },
    cfg.meta.file,
  );
  const db = openStateDb(resolveConfigPath(cfg, cfg.state.path), { busyTimeoutMs: cfg.state.busy_timeout });
  try {
    return await refreshMirror({
      client,
      mirror: new Mirror(db),
      clock: systemClock,
      logger,
      overlapSeconds: cfg.state.mirror_overlap_seconds,
      fullWalkEveryMs: cfg.state.full_walk_every,
      full,
      signal: ctx.shutdownSignal,
    });
  } catch (err) {
    if (isPlatformError(err)) throw platformFailure(err);
    if (ctx.shutdownSignal.aborted) throw new OrgsyncError('PLATFORM_ERROR', 'mirror refresh stopped before it finished; the next refresh resumes it');
    throw err;
  } finally {
    db.close();
    await client.close();
  }
}

const pad = (s: string, n: number) => s.padEnd(n);

/** The text of `mirror status`. */
export function renderStatus(path: string, counts: StatusCount[], states: EntitySyncState[]): string {
  const lines = [`state DB: ${path}`, '', `${pad('ENTITY', 13)}${pad('STATUS', 11)}COUNT`];
  for (const s of states) {
    const mine = counts.filter((c) => c.entity === s.entity);
    if (mine.length === 0) lines.push(`${pad(s.entity, 13)}${pad('-', 11)}0`);
    for (const c of mine) lines.push(`${pad(c.entity, 13)}${pad(c.status, 11)}${c.count}`);
  }
  lines.push('', `${pad('ENTITY', 13)}${pad('WATERMARK', 26)}${pad('LAST FULL WALK', 26)}${pad('LAST INCREMENTAL', 26)}LAST WALK`);
  for (const s of states) {
    const last = s.lastWalk ? `${s.lastWalk.kind}, ${s.lastWalk.completedAt ? `completed ${s.lastWalk.completedAt}` : `started ${s.lastWalk.startedAt}, not completed`}` : 'never';
    lines.push(`${pad(s.entity, 13)}${pad(s.watermark ?? 'none', 26)}${pad(s.lastFullWalkAt ?? 'never', 26)}${pad(s.lastIncrementalAt ?? 'never', 26)}${last}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The text of `mirror refresh`. */
export function renderRefresh(result: RefreshMirrorResult): string {
  return result.entities
    .map((e) => `${e.entity}: ${e.mode} walk, ${e.pages} page${e.pages === 1 ? '' : 's'}, ${e.records} records (${e.tombstones} tombstones), ${e.removed} removed; watermark ${e.watermark}\n`)
    .join('');
}
