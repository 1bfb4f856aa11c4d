import { Writable } from 'node:stream';
import { Command, CommanderError } from 'commander';
import { EXIT, isOrgsyncError, oneLine, SIGNAL_EXIT, signalExitCode } from '../shared/errors.js';
import { redact, redactSecrets } from '../shared/redact.js';
import type { CliContext, CommandResult } from './context.js';
import { VERSION } from './version.js';
import { OutputWatch, outputUnwritable } from './output-watch.js';
import { registerEmulatorCommand } from './commands/emulator.js';
import { registerConfigCommand } from './commands/config.js';
import { registerDaemonCommand } from './commands/daemon.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerMirrorCommand } from './commands/mirror.js';
import { registerPlanCommand } from './commands/plan.js';
import { registerSyncCommand } from './commands/sync.js';
import { registerSourcesCommand } from './commands/sources.js';
import { registerApplyCommand } from './commands/apply.js';
import { registerExplainCommand } from './commands/explain.js';
import { registerHistoryCommand } from './commands/history.js';
import { registerForgetCommand } from './commands/forget.js';
import { registerAdoptCommand } from './commands/adopt.js';
import { registerReleaseCommand } from './commands/release.js';
import { registerStateCommand } from './commands/state.js';
import { registerApprovalsCommand } from './commands/approvals.js';

/**
 * commander checks required options before unknown ones, so `plan --confg F` said "required option --config not
 * specified". This Command reports the unknown option first, with commander's own "Did you mean --config?".
 */
class OrgsyncCommand extends Command {
  override createCommand(name?: string): Command {
    return new OrgsyncCommand(name);
  }

  /** Called by commander with the arguments it did not recognise, just before the required-option check. */
  _outputHelpIfRequested(args: string[]): void {
    const self = this as unknown as { _actionHandler?: unknown; _allowUnknownOption?: boolean; unknownOption(flag: string): never };
    (Command.prototype as unknown as { _outputHelpIfRequested(this: Command, a: string[]): void })._outputHelpIfRequested.call(this, args);
    if (self._actionHandler && !self._allowUnknownOption && args[0]?.startsWith('-') && args[0] !== '-') self.unknownOption(args[0]);
  }
}

/** Each command module adds its subcommand; the action stores its exit code through `setResult`. */
type Registrar = (program: Command, ctx: CliContext, setResult: (p: Promise<CommandResult>) => void) => void;

const registrars: Registrar[] = [
  registerEmulatorCommand,
  registerConfigCommand,
  registerDaemonCommand,
  registerDemoCommand,
  registerMirrorCommand,
  registerPlanCommand,
  registerSyncCommand,
  registerSourcesCommand,
  registerApplyCommand,
  registerExplainCommand,
  registerHistoryCommand,
  registerForgetCommand,
  registerAdoptCommand,
  registerReleaseCommand,
  registerStateCommand,
  registerApprovalsCommand,
];

/**
 * `inner` behind the shared redactor: every chunk written is passed through `filter` first. Writes go through
 * at once (the terminal and test captures see each line when it is written); once `inner` failed (a closed pipe),
 * they are dropped.
 */
function redacting(inner: Writable, filter: (text: string) => string, output: OutputWatch): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, callback) {
      if (output.writable(inner)) inner.write(filter(typeof chunk === 'string' ? chunk : chunk.toString('utf8')));
      callback();
    },
  });
}

/**
 * Runs the CLI and resolves with the exit code. Never throws: errors become one line on stderr. When stdout or stderr
 * can no longer be written (src/cli/output-watch.ts), the command is asked to stop and nothing more is written to it.
 */
export async function main(argv: string[], outerCtx: CliContext): Promise<number> {
  const output = new OutputWatch(outerCtx);
  // Nothing a command prints leaves with a secret in it: stdout carries documents (plans, JSON), so only the
  // registered secret values are replaced there; stderr carries messages, so URLs and credentials are too.
  const ctx: CliContext = {
    ...outerCtx,
    stdout: redacting(outerCtx.stdout, (t) => redactSecrets(t), output),
    stderr: redacting(outerCtx.stderr, (t) => redact(t), output),
    shutdownSignal: AbortSignal.any([outerCtx.shutdownSignal, output.signal]),
  };
  try {
    const code = await runProgram(argv, ctx);
    // A write's error surfaces after the write: wait until both streams have taken what was written.
    await Promise.all([handedOver(outerCtx.stdout), handedOver(outerCtx.stderr)]);
    if (!output.failure) return code;
    // Not a closed pipe: the output is incomplete (a full disk under `> plan.json`), which must not look like success.
    const err = outputUnwritable(output.failure.stream, output.failure.error);
    ctx.stderr.write(`orgsync: ${err.message}\n`);
    return err.exitCode;
  } finally {
    output.release();
  }
}

/** Resolves once `stream` has taken (or refused) everything written to it so far, and its 'error' event was emitted. */
function handedOver(stream: Writable): Promise<void> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve();
  return new Promise((resolve) => stream.write('', () => setImmediate(resolve)));
}

/** Exit code of a command that ended after a shutdown request: the signal's, for a closed pipe only if it cut work short. */
function exitAfterStop(signal: AbortSignal, code: number): number {
  if (!signal.aborted) return code;
  const bySignal = signalExitCode(signal.reason);
  // A command that finished its work keeps its code (0 for `plan | head -1`); a run the stop cut short failed (1),
  // and exits 128 + SIGPIPE as a writer the pipe killed would.
  if (bySignal === SIGNAL_EXIT.SIGPIPE) return code === EXIT.FAILED ? bySignal : code;
  return bySignal ?? code;
}

/** Parses `argv` and runs its command with `ctx`. */
async function runProgram(argv: string[], ctx: CliContext): Promise<number> {
  const program = new OrgsyncCommand();
  program
    .name('orgsync')
    .description('Keeps a tenant\'s organisation (departments, positions, members) on the platform in sync with HR truth.')
    .version(VERSION, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Examples (the walkthrough of README.md "Sync your own tenant": my-sync.yaml reads the demo's HR data of config/demo/):
  $ orgsync config validate --config my-sync.yaml
  $ orgsync sources check --config my-sync.yaml
  $ orgsync plan --config my-sync.yaml
  $ orgsync sync --config my-sync.yaml
  $ orgsync daemon --config my-sync.yaml   # runs until Ctrl-C

Nothing to configure yet? \`orgsync demo\` (\`npm start\` in a checkout) syncs the demo data into an embedded emulator.
Every command's --help has examples: orgsync plan --help.`,
    )
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => ctx.stderr.write(s),
    })
    .exitOverride();

  let pending: Promise<CommandResult> | undefined;
  const setResult = (p: Promise<CommandResult>) => {
    pending = p;
  };
  for (const register of registrars) register(program, ctx, setResult);

  // A command stopped by SIGINT/SIGTERM exits 130/143, whatever it returned or threw on the way out.
  const bySignal = (code: number): number => exitAfterStop(ctx.shutdownSignal, code);
  try {
    await program.parseAsync(argv, { from: 'user' });
    const code = pending ? await pending : EXIT.OK;
    if (typeof code === 'object') return code.exitCode;
    return bySignal(typeof code === 'number' ? code : EXIT.OK);
  } catch (err) {
    if (ctx.shutdownSignal.aborted && signalExitCode(ctx.shutdownSignal.reason) !== undefined) {
      // Stopped because the reader went away: quietly (the run history has what happened).
      if (signalExitCode(ctx.shutdownSignal.reason) !== SIGNAL_EXIT.SIGPIPE) ctx.stderr.write(`orgsync: ${oneLine(err)}\n`);
      return bySignal(EXIT.FAILED);
    }
    if (err instanceof CommanderError) {
      // `orgsync` or `orgsync mirror` without a command prints the help and is a usage error (exit 2).
      if (err.code === 'commander.help' && err.exitCode !== 0) return EXIT.USAGE;
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.OK;
      return EXIT.USAGE;
    }
    if (isOrgsyncError(err)) {
      // An error of several problems (every issue of a config file) prints one line per problem, in every command.
      const issues = err.details?.issues;
      const lines = Array.isArray(issues) && issues.length > 0 ? (issues as unknown[]).map(String) : [oneLine(err)];
      for (const line of lines) ctx.stderr.write(`orgsync: ${line}\n`);
      return err.exitCode;
    }
    ctx.stderr.write(`orgsync: internal error: ${oneLine(err)}\n`);
    if (ctx.env.ORGSYNC_DEBUG) ctx.stderr.write(`${(err as Error)?.stack ?? ''}\n`);
    return EXIT.FAILED;
  }
}

export { VERSION };
