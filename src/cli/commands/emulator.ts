import { InvalidArgumentError, type Command } from 'commander';
import { createLogger, wantsPretty } from '../../observability/logger.js';
import { EXIT, OrgsyncError } from '../../shared/errors.js';
import type { CliContext, CommandResult } from '../context.js';
import { openEmulatorDoor, type RunningEmulatorHandle } from '../emulator-door.js';

function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('a port is an integer from 0 to 65535');
  return Number(value);
}

interface EmulatorFlags {
  port: number;
  seed: string;
  host: string;
  db?: string;
  adminToken?: string;
  translatePort?: number;
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
function logLevel(value: string): string {
  if (!LOG_LEVELS.includes(value)) throw new InvalidArgumentError(`one of ${LOG_LEVELS.join(', ')}`);
  return value;
}

/** `orgsync emulator`: runs the embedded platform emulator until SIGTERM/SIGINT. */
export function registerEmulatorCommand(program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void): void {
  program
    .command('emulator')
    .description('Run the embedded platform emulator (tenant external API) over a seed file.')
    .requiredOption('--port <n>', 'port to listen on (0: a free port)', port)
    .requiredOption('--seed <file>', 'seed file (YAML or JSON): tenants, API keys, members, limits')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--db <path>', 'SQLite file; data survives a restart (default: in memory)')
    .option('--admin-token <token>', 'enables the /_emulator admin routes (fault injection, request counts) for Bearer <token>')
    .option('--translate-port <n>', 'also start the document-translation API on this port', port)
    .option('--log-level <level>', 'log lines (to stderr) at this level and above', logLevel, 'warn')
    .addHelpText(
      'after',
      '\nExample:\n  $ orgsync emulator --port 8080 --seed config/demo/seed.yaml   # runs until Ctrl-C (then exit 0); the demo tenant, key ek_demo_4f8a2c9e71b3d6054e2a\n' +
        'Prints one line "orgsync emulator listening on http://HOST:PORT" when ready.\n',
    )
    .action((flags: EmulatorFlags) => {
      setResult(runEmulator(flags, ctx));
    });
}

async function runEmulator(flags: EmulatorFlags, ctx: CliContext): Promise<CommandResult> {
  const { loadSeedFile, startEmulator } = await openEmulatorDoor();
  const seed = loadSeedFile(flags.seed);
  // Logs go to stderr: stdout carries only the ready line(s). Seed keys and the admin token are redacted by value.
  const secrets = [...seed.tenants.flatMap((t) => t.api_keys.map((k) => k.key)), ...(flags.adminToken ? [flags.adminToken] : [])];
  // No orgsync config here: no log.redact paths beyond the built-in ones.
  const logger = createLogger({ level: flags.logLevel, destination: ctx.stderr, pretty: wantsPretty('auto', false), secrets, redactPaths: [] });
  let running: RunningEmulatorHandle;
  try {
    running = await startEmulator({
      seed,
      host: flags.host,
      port: flags.port,
      logger,
      ...(flags.db ? { dbPath: flags.db } : {}),
      ...(flags.adminToken ? { adminToken: flags.adminToken } : {}),
      ...(flags.translatePort !== undefined ? { translatePort: flags.translatePort } : {}),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      throw new OrgsyncError('USAGE', `cannot listen on ${flags.host} (--port ${flags.port}${flags.translatePort !== undefined ? `, --translate-port ${flags.translatePort}` : ''}): ${code}`);
    }
    throw err;
  }
  ctx.stdout.write(`orgsync emulator listening on ${running.url}\n`);
  if (running.translateUrl) ctx.stdout.write(`orgsync translate emulator listening on ${running.translateUrl}\n`);
  if (!ctx.shutdownSignal.aborted) {
    await new Promise<void>((resolve) => ctx.shutdownSignal.addEventListener('abort', () => resolve(), { once: true }));
  }
  await running.close();
  // A signal is how the emulator is meant to stop: exit 0, as before the sync's 130/143 rule.
  return { exitCode: EXIT.OK, stoppedBySignalAsPlanned: true };
}
