import type { Command } from 'commander';
import type { CliContext, CommandResult } from '../context.js';

/** `orgsync emulator`: placeholder until the emulator issue lands (src/emulator). */
export function registerEmulatorCommand(program: Command, _ctx: CliContext, _setResult: (p: Promise<CommandResult>) => void): void {
  program.command('emulator').description('Run the embedded platform emulator.');
}
