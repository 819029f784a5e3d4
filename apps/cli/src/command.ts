import { parseArgs } from 'node:util';

/** What a command may touch: its output, its input, its environment. Tests pass their own. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  readStdin(): Promise<string>;
  env: Readonly<Record<string, string | undefined>>;
  /** Aborted on Ctrl-C: long-running commands (events tail) stop and exit cleanly. */
  signal?: AbortSignal;
}

/** Exit codes: 0 done, 1 the command failed (a refused reply, an unreachable gateway), 2 bad usage. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Bad usage: said on stderr with a pointer to `--help`, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * The command ran and failed: `error <code>: <message>` (and details) on stderr, exit code 1.
 * `code` is the reply's error code; undefined for a local failure (a file that exists, ...).
 */
export class CommandFailed extends Error {
  constructor(
    readonly code: string | undefined,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'CommandFailed';
  }
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** Placeholder in help, e.g. `<file>`. */
  value?: string;
  description: string;
}

export interface PositionalSpec {
  name: string;
  required: boolean;
  description: string;
  /** The last positional takes every argument left (e.g. a command line after `--`). */
  rest?: boolean;
}

export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface Parsed {
  values: OptionValues;
  positionals: string[];
}

export interface CommandSpec {
  /** Words after `agora`, e.g. `agents register`. */
  name: string;
  /** One line for `agora --help`. */
  brief: string;
  summary: string;
  /** Everything after `agora <name>` in the usage line. */
  usage: string;
  description?: string;
  options: Record<string, OptionSpec>;
  positionals: PositionalSpec[];
  examples: string[];
  run(args: Parsed, io: Io): Promise<number>;
}

/** Options every command takes. */
export const COMMON_OPTIONS: Record<string, OptionSpec> = {
  url: { type: 'string', value: '<url>', description: 'the gateway (default: $AGORA_URL, else http://127.0.0.1:8080)' },
  'read-key': { type: 'string', value: '<file>', description: 'key file whose read token the reads carry (default: --key, else $AGORA_KEY_FILE, else <AGORA_DATA_DIR>/operator.key.json when there)' },
  help: { type: 'boolean', short: 'h', description: 'show this help' },
};

function optionLabel(name: string, spec: OptionSpec): string {
  const short = spec.short ? `-${spec.short}, ` : '    ';
  const value = spec.type === 'string' ? ` ${spec.value ?? '<value>'}` : '';
  return `${short}--${name}${value}`;
}

/** Two aligned columns. */
export function columns(rows: readonly (readonly [string, string])[], indent = '  '): string {
  const width = Math.max(0, ...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `${indent}${left.padEnd(width)}  ${right}`.trimEnd()).join('\n');
}

export function commandHelp(spec: CommandSpec): string {
  const options = { ...spec.options, ...COMMON_OPTIONS };
  const parts = [`Usage: agora ${spec.name} ${spec.usage}`.trimEnd(), '', spec.summary];
  if (spec.description) parts.push('', spec.description);
  if (spec.positionals.length > 0) parts.push('', 'Arguments:', columns(spec.positionals.map((p) => [p.required ? `<${p.name}>` : `[${p.name}]`, p.description])));
  parts.push('', 'Options:', columns(Object.entries(options).map(([name, o]) => [optionLabel(name, o), `${o.description}${o.multiple ? ' (repeatable)' : ''}`])));
  parts.push('', spec.examples.length > 1 ? 'Examples:' : 'Example:', ...spec.examples.map((e) => `  ${e}`));
  return `${parts.join('\n')}\n`;
}

/** True when the arguments ask for help (`--help` or `-h` before any `--`). */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const arg of argv) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}

/** node:util parseArgs with the command's options, strict, its errors turned into UsageErrors. */
export function parseCommandArgs(spec: CommandSpec, argv: readonly string[]): Parsed {
  const options = Object.fromEntries(
    Object.entries({ ...spec.options, ...COMMON_OPTIONS }).map(([name, o]) => [name, { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) }]),
  );
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parseErrorMessage(error), spec.name);
  }
  const max = spec.positionals.at(-1)?.rest ? Infinity : spec.positionals.length;
  const min = spec.positionals.filter((p) => p.required).length;
  if (parsed.positionals.length > max) {
    const extra = parsed.positionals[max] as string;
    throw new UsageError(max === 0 ? `unexpected argument ${JSON.stringify(extra)}` : `too many arguments (unexpected ${JSON.stringify(extra)})`, spec.name);
  }
  if (parsed.positionals.length < min) throw new UsageError(`missing <${spec.positionals[parsed.positionals.length]!.name}>`, spec.name);
  return { values: parsed.values as OptionValues, positionals: parsed.positionals };
}

function parseErrorMessage(error: unknown): string {
  const { code, message = String(error) } = error as { code?: string; message?: string };
  // Node names the option as '--name', '-n' or '-n, --name <value>': keep the long form.
  const quoted = /'([^']+)'/.exec(message)?.[1] ?? '';
  const option = /--[^\s,<]+/.exec(quoted)?.[0] ?? quoted;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${option}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (/argument missing/.test(message)) return `option ${option} needs a value`;
    if (/does not take an argument/.test(message)) return `option ${option} takes no value`;
  }
  return message;
}

/** A string option, or undefined. */
export function stringOption(args: Parsed, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value : undefined;
}

export function requiredOption(args: Parsed, name: string, command: string): string {
  const value = stringOption(args, name);
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`, command);
  return value;
}

export function flag(args: Parsed, name: string): boolean {
  return args.values[name] === true;
}

/** A repeatable option, each value also split on commas: `--roles a,b --roles c` -> [a, b, c]. */
export function listOption(args: Parsed, name: string): string[] | undefined {
  const value = args.values[name];
  if (value === undefined) return undefined;
  const values = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
  return values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
}

export function integerOption(args: Parsed, name: string, command: string, range: { min: number; max: number }): number | undefined {
  const text = stringOption(args, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isInteger(value) || value < range.min || value > range.max) {
    throw new UsageError(`--${name} must be a whole number from ${range.min} to ${range.max} (got ${JSON.stringify(text)})`, command);
  }
  return value;
}
