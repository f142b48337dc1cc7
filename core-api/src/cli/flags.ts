import { type ParseArgsConfig, parseArgs } from 'node:util';
import { EMAIL_RULE_MESSAGE, isEmailAddress } from '@pts/shared';
import { UsageError } from './cli-context.ts';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** `--json`, accepted by every command. */
export const jsonOption = { json: { type: 'boolean' } } as const satisfies OptionsConfig;

/** A negative number as written after a flag (`-1`, `-3`, `-0.5`): a value, not an option. */
const NEGATIVE_NUMBER = /^-\d+(\.\d+)?$/;

/**
 * Joins `--flag -1` into `--flag=-1` for string options: node's parser takes a leading dash for an option
 * ("argument is ambiguous"), but the spec writes `-1` as a value (unlimited claims).
 */
function joinNegativeValues(args: string[], options: OptionsConfig): string[] {
  const joined: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    const next = args[index + 1];
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : undefined;
    if (name && options[name]?.type === 'string' && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      joined.push(`${arg}=${next}`);
      index++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/** Parses flags strictly (no unknown flags, no positionals); a failure becomes a one-line UsageError. */
export function parseFlags<T extends OptionsConfig>(args: string[], options: T) {
  try {
    return parseArgs({ args: joinNegativeValues(args, options), options, strict: true, allowPositionals: false })
      .values;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(message.replace(/\s*\n\s*/g, ' '));
  }
}

/** The value of a flag the command cannot do without. */
export function requireFlag(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`--${flag} is required`);
  return value.trim();
}

/** An e-mail flag, checked by the one rule every reader shares (so `demo@localhost` passes) before any request. */
export function requireEmailFlag(value: string | undefined, flag: string): string {
  const email = requireFlag(value, flag);
  if (!isEmailAddress(email)) throw new UsageError(`--${flag} ${EMAIL_RULE_MESSAGE} (got "${email}")`);
  return email;
}

/** A whole number ≥ 0 written in decimal digits. */
export function parseNonNegativeInteger(value: string, flag: string): number {
  const number = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(number)) throw new UsageError(`--${flag} must be a whole number ≥ 0, got "${value}"`);
  return number;
}

/** Per-user claims: a positive whole number, or `unlimited` / -1 (stored as -1). */
export function parseMaxClaims(value: string): number {
  const trimmed = value.trim();
  if (trimmed === 'unlimited' || trimmed === '-1') return -1;
  const number = /^\d+$/.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < 1) {
    throw new UsageError(`--max-claims must be a whole number ≥ 1 or "unlimited", got "${value}"`);
  }
  return number;
}

/** `on` / `off` (also true/false, yes/no). */
export function parseOnOff(value: string, flag: string): boolean {
  const normalised = value.trim().toLowerCase();
  if (['on', 'true', 'yes'].includes(normalised)) return true;
  if (['off', 'false', 'no'].includes(normalised)) return false;
  throw new UsageError(`--${flag} must be on or off, got "${value}"`);
}

/** A comma-separated list; blank items are dropped. */
export function parseList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}
