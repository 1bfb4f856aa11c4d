/** Option parsers several commands share (commander's argParser functions). */
import { InvalidArgumentError } from 'commander';

/** Parses `--allow-deletes N` (a whole number >= 0). */
export function parseAllowDeletes(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected a whole number of removals, e.g. --allow-deletes 25');
  return Number(value);
}

