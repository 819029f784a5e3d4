/** A small reader of the Prometheus text format, enough to check what /metrics says. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** `# TYPE` by metric family. */
  types: Map<string, string>;
  /** `# HELP` by metric family. */
  help: Map<string, string>;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function number(text: string): number {
  if (/^nan$/i.test(text)) return Number.NaN;
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  return Number(text);
}

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      (meta[1] === 'HELP' ? help : types).set(meta[2]!, meta[3]!);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (m[2] ?? '').matchAll(LABEL)) labels[key!] = value!;
    samples.push({ name: m[1]!, labels, value: number(m[3]!) });
  }
  return { samples, types, help };
}

/** The value of the one sample of `name` whose labels include `labels`; fails when there is not exactly one. */
export function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  const found = exposition.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length !== 1) throw new Error(`${found.length} samples of ${name}${JSON.stringify(labels)}`);
  return found[0]!.value;
}
