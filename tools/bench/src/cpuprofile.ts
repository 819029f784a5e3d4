/**
 * Where a process's CPU went, from a V8 CPU profile (`node --cpu-prof`), in text: no GUI needed.
 *
 *   node tools/bench/dist/cpuprofile.js <file.cpuprofile> [--phase N] [--top 25] [--callers NAME,...]
 *
 * The profile is cut into phases at each stretch of at least half a second of idleness
 * (`bench:commands` pauses between its phases), and phases shorter than half a second of work are
 * left out (start-up bursts, shutdown). It prints the phases, then for one of them (`--phase`,
 * counted from 1; default: the last, `bench:commands`' UpdateAgent) the CPU time by activity (the
 * innermost frame of a sample that names one, see ACTIVITIES), by file or package (self time),
 * and the functions with the most self time; with `--callers`, for each function named, the call
 * chains (five frames up) its self time was spent under, heaviest first.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Activities of the command path, by a frame's function name and file. A sample counts for the
 * innermost frame of its stack that matches one (so canonical JSON inside the signature check
 * counts as the signature check); samples matching none count by their own frame's package.
 */
const ACTIVITIES: readonly (readonly [string, RegExp])[] = [
  ['Ed25519 verify (gate)', /^verifyCommandSignature .*identity/],
  ['envelope gate, other (zod, directory, checks)', /^verify .*messaging\/dist\/command-gate/],
  ['reply cache key (canonical JSON + sha256)', /^replyCacheKey /],
  ['command-id reservation (kit)', /^(reserveCommandId|checkCommandId|reservationOf|storedReservation) /],
  ['decide + fold + event data (kit)', /^(decideAndAppend|handleCommand|toEventData|withOwnCommit|folded|decide|evolve) /],
  ['store append (encode, publish)', /^(append|appendInOrder|publish) .*eventstore\/dist\/jetstream\/store/],
  ['store read (direct gets)', /^(readStream|readStreamByGets|getMessage|readLastCommit) .*eventstore\/dist\/jetstream\/store/],
  ['log subscriptions (directory, reactors: pull, decode, checkpoint)', /eventstore\/dist\/(jetstream\/(all-reader|pull-reader|shared-tail)|catch-up)|eventsourcing\/dist\/checkpointed-consumer|runtime\/dist\/(agent-directory|reactor)/],
  ['NestJS transport (server, rxjs, codec)', /@nestjs\/microservices|node_modules\/rxjs|messaging\/dist\/(codec|messaging\.module|dispatcher)/],
  ['metrics (prom-client)', /prom-client|runtime\/dist\/metrics/],
];

const USAGE = `Usage: node tools/bench/dist/cpuprofile.js <file.cpuprofile> [options]

Where a process's CPU went, from a V8 CPU profile (node --cpu-prof --cpu-prof-dir DIR ...), in text.
The profile is cut into phases at each stretch of at least half a second of idleness; it prints
the phases, then for one of them the CPU time by activity, by file or package, and by function.

Options:
  --phase N          the phase to break down, counted from 1 (default: the last)
  --top N            rows in each table (default 25)
  --callers LIST     comma-separated function names: for each, the call chains (five frames up)
                     its self time was spent under, heaviest first (e.g. --callers update,slice)
  -h, --help         this help`;
const { values, positionals } = parseArgs({ allowPositionals: true, options: { phase: { type: 'string' }, top: { type: 'string', default: '25' }, callers: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } } });
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const file = positionals[0];
if (file === undefined) {
  console.error(`cpuprofile: name a profile file\n\n${USAGE}`);
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const top = Number(values.top);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);

/** Where a frame's code lives: a package (node_modules), a workspace file, a node: module, or a V8 pseudo-frame. */
function whereOf({ url, functionName }: CallFrame): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/((?:libs|apps|tools)\/[^/]+)\/dist\/(.*)$/.exec(url);
  if (own) return `${own[1]}/${own[2]}`;
  return url.replace(/^node:internal\//, 'node:');
}
const label = (f: CallFrame) => `${f.functionName || '(anonymous)'} ${f.url}`;

// Sample i lasted until sample i + 1 (V8 gives the delta before each sample).
const durationUs = (i: number) => profile.timeDeltas[i + 1] ?? 0;
const isIdle = (i: number) => byId.get(profile.samples[i]!)!.callFrame.functionName === '(idle)';

interface Phase {
  from: number;
  to: number;
  busyUs: number;
  spanUs: number;
}
const phases: Phase[] = [];
{
  const GAP_US = 500_000;
  let current: Phase | undefined;
  let idleRun = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const d = durationUs(i);
    if (isIdle(i)) {
      idleRun += d;
      if (current && idleRun >= GAP_US) {
        phases.push(current);
        current = undefined;
      }
      continue;
    }
    if (current) current.spanUs += idleRun;
    idleRun = 0;
    current ??= { from: i, to: i, busyUs: 0, spanUs: 0 };
    current.to = i;
    current.busyUs += d;
    current.spanUs += d;
  }
  if (current) phases.push(current);
}
const worked = phases.filter((p) => p.busyUs >= 500_000);
const ms = (us: number) => `${(us / 1000).toFixed(0)} ms`;
console.log(`${file}\nphases (separated by >= 0.5 s idle, >= 0.5 s of work):`);
worked.forEach((p, i) => console.log(`  ${i + 1}: ${(p.spanUs / 1e6).toFixed(2)} s, ${ms(p.busyUs)} busy (${((100 * p.busyUs) / p.spanUs).toFixed(0)} %)`));
const index = values.phase === undefined ? worked.length : Number(values.phase);
const phase = worked[index - 1];
if (!phase) {
  console.error(`no phase ${values.phase ?? ''}: the profile has ${worked.length}`);
  process.exit(2);
}

const byActivity = new Map<string, number>();
const byWhere = new Map<string, number>();
const byFunction = new Map<string, number>();
const add = (m: Map<string, number>, k: string, d: number) => m.set(k, (m.get(k) ?? 0) + d);
for (let i = phase.from; i <= phase.to; i++) {
  if (isIdle(i)) continue;
  const d = durationUs(i);
  const leaf = byId.get(profile.samples[i]!)!;
  const where = whereOf(leaf.callFrame);
  add(byWhere, where, d);
  add(byFunction, `${leaf.callFrame.functionName || '(anonymous)'}  ${where}:${leaf.callFrame.lineNumber + 1}`, d);
  let activity: string | undefined;
  for (let id: number | undefined = leaf.id; id !== undefined && activity === undefined; id = parentOf.get(id)) {
    const text = label(byId.get(id)!.callFrame);
    activity = ACTIVITIES.find(([, re]) => re.test(text))?.[0];
  }
  add(byActivity, activity ?? `other: ${where}`, d);
}

function table(title: string, m: Map<string, number>, n: number): void {
  console.log(`\n${title}`);
  const rows = [...m].sort((a, b) => b[1] - a[1]);
  for (const [k, v] of rows.slice(0, n)) console.log(`${ms(v).padStart(9)} ${((100 * v) / phase!.busyUs).toFixed(1).padStart(5)} %  ${k}`);
  const rest = rows.slice(n).reduce((s, [, v]) => s + v, 0);
  if (rest > 0) console.log(`${ms(rest).padStart(9)} ${((100 * rest) / phase!.busyUs).toFixed(1).padStart(5)} %  (${rows.length - n} more)`);
}
console.log(`\nphase ${index}: ${ms(phase.busyUs)} of CPU`);
table('by activity (innermost frame naming one):', byActivity, top);
table('self time by file or package:', byWhere, top);
table('self time by function:', byFunction, top);

// The call chains under which each named function spent its self time in the phase.
for (const name of values.callers?.split(',').filter(Boolean) ?? []) {
  const chains = new Map<string, number>();
  for (let i = phase.from; i <= phase.to; i++) {
    const leaf = byId.get(profile.samples[i]!)!;
    if (leaf.callFrame.functionName !== name) continue;
    const frames: string[] = [];
    for (let id = parentOf.get(leaf.id); id !== undefined && frames.length < 5; id = parentOf.get(id)) {
      const frame = byId.get(id)!.callFrame;
      frames.push(`${frame.functionName || '(anonymous)'} ${whereOf(frame)}:${frame.lineNumber + 1}`);
    }
    add(chains, frames.join(' < '), durationUs(i));
  }
  if (chains.size === 0) console.log(`\ncallers of ${name}: no sample in phase ${index}`);
  else table(`callers of ${name} (its self time, by the five frames above it):`, chains, top);
}
