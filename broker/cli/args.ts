/**
 * Argument parsing for the `floe` admin commands: positionals, `--name value` / `--name=value` options
 * (repeatable ones collect every value) and boolean flags. Anything unknown is a usage error (exit 2).
 */
import { CliError, EXIT } from './admin-client.js';

export interface OptionSpec {
  /** Takes a value (`--partition 0`); otherwise a flag (`--json`). */
  readonly value: boolean;
  readonly repeat?: boolean;
}

export interface ParsedArgs {
  readonly positionals: string[];
  readonly options: Map<string, string[]>;
  readonly flags: Set<string>;
}

export function parseArgs(argv: readonly string[], specs: Readonly<Record<string, OptionSpec>>, usage: string): ParsedArgs {
  const positionals: string[] = [];
  const options = new Map<string, string[]>();
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--') || arg === '--') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const spec = specs[name];
    if (spec === undefined) throw new CliError(EXIT.USAGE, `unknown option --${name}\n${usage}`);
    if (!spec.value) {
      if (eq >= 0) throw new CliError(EXIT.USAGE, `--${name} takes no value\n${usage}`);
      flags.add(name);
      continue;
    }
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      i++;
    }
    if (value === undefined) throw new CliError(EXIT.USAGE, `--${name} needs a value\n${usage}`);
    const list = options.get(name) ?? [];
    if (list.length > 0 && spec.repeat !== true) throw new CliError(EXIT.USAGE, `--${name} is given twice\n${usage}`);
    list.push(value);
    options.set(name, list);
  }
  return { positionals, options, flags };
}

/** A non-negative integer option (`--partition 0`), undefined when absent. */
export function intOption(args: ParsedArgs, name: string, usage: string): number | undefined {
  const v = args.options.get(name)?.[0];
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw new CliError(EXIT.USAGE, `--${name} must be a non-negative integer, not '${v}'\n${usage}`);
  return Number(v);
}

export function requiredInt(args: ParsedArgs, name: string, usage: string): number {
  const v = intOption(args, name, usage);
  if (v === undefined) throw new CliError(EXIT.USAGE, `--${name} is required\n${usage}`);
  return v;
}
