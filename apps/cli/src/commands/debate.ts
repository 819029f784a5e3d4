import { randomUUID } from 'node:crypto';
import { OpenDebate, type DebateSummary, type DebateView, type MessageView, type ThreadView } from '@agora/contracts';
import type { Agora } from '@agora/sdk';
import { EXIT, flag, listOption, requiredOption, stringOption, UsageError, type CommandSpec, type Io, type OptionSpec, type Parsed } from '../command.js';
import { actorOf, describeCommandResult, gatewayReader, gatewayUrl, MIN_POSITION_OPTION, printJson, queryGateway, readKeyFile, resultOf, sendCommand } from '../gateway-client.js';

const SIGNING: Record<string, OptionSpec> = {
  key: { type: 'string', short: 'k', value: '<file>', description: 'your key file: signs the command' },
  actor: { type: 'string', value: '<agentId>', description: "who signs (default: the key file's agentId)" },
  json: { type: 'boolean', description: 'print the whole reply as JSON' },
};

/** The debate's view; with `args` (a command's), read only once the gateway has reached --min-position. */
function fetchDebate(reader: Agora, debateId: string, args?: Parsed): Promise<DebateView> {
  return queryGateway(reader, 'GetDebate', { debateId }, args);
}

const clip = (text: string, full: boolean, at = 300) => (full || text.length <= at ? text : `${text.slice(0, at)}… (--full shows all)`);

/** One message of the debate as a line: order, thread and stage, who, the move, its text. */
export function describeMessage(m: MessageView, full = false): string {
  return `#${m.seq} [${m.threadId} ${m.stage}] ${m.agentId} ${m.kind}${m.target ? ` → ${m.target}` : ''}: ${clip(m.text.replace(/\s+/g, ' ').trim(), full)}`;
}

/** Where a thread stands: its stage, question, commitments, steelmans, lock attempts and crux. */
export function describeThread(t: ThreadView): string {
  const lines = [`thread ${t.threadId} (${t.topic}): ${t.stage}${t.unresolvedReason ? ` (${t.unresolvedReason})` : ''}, ${t.stageMessages} messages in this stage`];
  if (t.question) lines.push(`  question: ${t.question}${t.forcedBinary ? ' (binary framing forced by the moderator)' : ''}`);
  else if (t.questions.length > 0) lines.push(`  questions proposed: ${t.questions.length}, none accepted yet`);
  if (t.commitments.length > 0) lines.push(`  commitments: ${t.commitments.map((c) => `${c.agentId} ${c.side}`).join(', ')}`);
  const graded = t.steelmans.filter((s) => s.grade !== null);
  if (t.steelmans.length > 0) lines.push(`  steelmans: ${t.steelmans.length} (${graded.filter((s) => s.grade === 'ACCURATE').length} graded ACCURATE of ${graded.length} graded)`);
  if (t.falsifiers.length > 0) lines.push(`  falsifiers: ${t.falsifiers.length}`);
  if (t.lockAttempts.length > 0) lines.push(`  lock attempts: ${t.lockAttempts.length} (${t.lockAttempts.filter((a) => a.passed).length} passed)`);
  if (t.concluded.length > 0) lines.push(`  concluded: ${t.concluded.join(', ')}`);
  if (t.crux) {
    lines.push(`  crux: ${t.crux.question} (${t.crux.validated ? 'validated' : 'not validated'})`);
    for (const [agent, p] of Object.entries(t.crux.positions)) lines.push(`    ${agent}: ${p.side} (${p.confidence}); top claim: ${p.topClaim}`);
  }
  return lines.join('\n');
}

/** The whole debate, readable. */
export function describeDebate(view: DebateView, full = false): string {
  const head = `debate ${view.debateId}: ${view.topic}\n  ${view.status}${view.outcome ? `, outcome ${view.outcome}` : ''}${view.primaryThreadId ? `, primary thread ${view.primaryThreadId}` : ''}; participants ${view.participants.map((p) => `${p.agentId} (${p.persona})`).join(', ')}`;
  const usage = view.usage.calls > 0 ? `\n  model calls ${view.usage.calls}, ${view.usage.inputTokens}+${view.usage.outputTokens} tokens, ${view.usage.costUsd.toFixed(4)} USD` : '';
  return [head + usage, ...view.threads.map(describeThread), ...view.messages.map((m) => describeMessage(m, full))].join('\n');
}

export const debateOpen: CommandSpec = {
  name: 'debate open',
  brief: 'open a crux debate between 2 to 5 debaters',
  summary: "Open a crux debate (OpenDebate, signed by a debater or an operator) on one thread `main` about the topic, with the seed's budgets. Debaters then send their moves as signed PostDebateMove commands (agora send PostDebateMove '{...}').",
  usage: '<topic> --participant <agentId>=<persona> ... --key <file> [--debate <id>]',
  options: {
    ...SIGNING,
    participant: { type: 'string', multiple: true, value: '<id>=<persona>', description: 'a debater and who it plays (2 to 5)' },
    debate: { type: 'string', value: '<id>', description: 'debate id (default: a new UUID)' },
  },
  positionals: [{ name: 'topic', required: true, description: 'what the debate is about' }],
  examples: ['agora debate open "Will Bitcoin replace gold as a store of value?" --participant saylor="Michael Saylor" --participant hayes="Arthur Hayes" --key root.key.json'],
  async run(args, io) {
    const command = 'debate open';
    const participants = (listOption(args, 'participant') ?? []).map((text) => {
      const at = text.indexOf('=');
      if (at <= 0 || at === text.length - 1) throw new UsageError(`--participant ${JSON.stringify(text)} must be <agentId>=<persona>`, command);
      return { agentId: text.slice(0, at), persona: text.slice(at + 1) };
    });
    if (participants.length < 2 || participants.length > 5) throw new UsageError(`a debate needs 2 to 5 participants (--participant), got ${participants.length}`, command);
    const url = gatewayUrl(args, io, command);
    const keyPath = requiredOption(args, 'key', command);
    const key = readKeyFile(keyPath);
    const debateId = stringOption(args, 'debate') ?? randomUUID();
    const reply = await sendCommand(url, { type: OpenDebate.type, actor: actorOf(args, key, keyPath, command), payload: { debateId, topic: args.positionals[0]!, participants }, key });
    if (flag(args, 'json') && reply.ok) printJson(io, reply);
    else io.stdout(`${describeCommandResult(OpenDebate.type, resultOf(reply))}\n`);
    io.stdout(`debate ${debateId} is open: follow it with agora debate watch ${debateId} (or in the console)\n`);
    return EXIT.ok;
  },
};

export const debateList: CommandSpec = {
  name: 'debate list',
  brief: 'debates, newest first, with their stages and outcome',
  summary: 'List debates (GET /v1/debate/debates): the most recently updated first, one page (--limit, default 20; the reply names the next page).',
  usage: '[--limit <n>] [--min-position <position>] [--json]',
  options: { limit: { type: 'string', value: '<n>', description: 'how many (default 20, at most 1000)' }, ...MIN_POSITION_OPTION, json: { type: 'boolean', description: 'the query result as JSON' } },
  positionals: [],
  examples: ['agora debate list'],
  async run(args, io) {
    const limit = Number(stringOption(args, 'limit') ?? 20);
    if (!Number.isSafeInteger(limit) || limit < 1) throw new UsageError('--limit must be a whole number from 1', 'debate list');
    const page: { debates: DebateSummary[]; nextCursor?: string } = await queryGateway(gatewayReader(args, io, 'debate list'), 'ListDebates', { limit }, args);
    if (flag(args, 'json')) {
      printJson(io, page);
      return EXIT.ok;
    }
    if (page.debates.length === 0) io.stdout('no debates\n');
    for (const d of page.debates) io.stdout(`${d.debateId}  ${d.status}${d.outcome ? ` (${d.outcome})` : ''}  ${d.stages.map((s) => `${s.threadId}:${s.stage}`).join(' ')}  ${d.topic}\n`);
    if (page.nextCursor) io.stdout(`(more: --limit ${Math.min(1000, limit * 2)} or the query's nextCursor)\n`);
    return EXIT.ok;
  },
};

export const debateShow: CommandSpec = {
  name: 'debate show',
  brief: 'a debate, readable: threads, stages, commitments, crux, every message',
  summary: 'Show a debate: where each thread stands (stage, question, commitments, steelmans, lock attempts, crux) and every message in order.',
  usage: '<debateId> [--full] [--min-position <position>] [--json]',
  options: { full: { type: 'boolean', description: 'every message in full' }, ...MIN_POSITION_OPTION, json: { type: 'boolean', description: 'the query result as JSON' } },
  positionals: [{ name: 'debateId', required: true, description: 'the debate' }],
  examples: ['agora debate show 7c1e...'],
  async run(args, io) {
    const view = await fetchDebate(gatewayReader(args, io, 'debate show'), args.positionals[0]!, args);
    if (flag(args, 'json')) printJson(io, view);
    else io.stdout(`${describeDebate(view, flag(args, 'full'))}\n`);
    return EXIT.ok;
  },
};

export const debateWatch: CommandSpec = {
  name: 'debate watch',
  brief: 'follow a debate live: each message and stage change as it is recorded',
  summary: 'Follow a debate until it is complete: each new message as it is recorded, and each thread whose stage changed.',
  usage: '<debateId> [--interval <ms>]',
  options: { interval: { type: 'string', value: '<ms>', description: 'how often to look (default 1000)' } },
  positionals: [{ name: 'debateId', required: true, description: 'the debate' }],
  examples: ['agora debate watch 7c1e...'],
  async run(args, io: Io) {
    const reader = gatewayReader(args, io, 'debate watch');
    const interval = Number(stringOption(args, 'interval') ?? 1000);
    let shown = 0;
    const stages = new Map<string, string>();
    for (;;) {
      const view = await fetchDebate(reader, args.positionals[0]!);
      // Each message names the stage it was posted in: a stage change shows wherever it falls between two looks.
      for (const m of view.messages.slice(shown)) {
        if (stages.get(m.threadId) !== m.stage) io.stdout(`  thread ${m.threadId}: ${m.stage}\n`);
        stages.set(m.threadId, m.stage);
        io.stdout(`${describeMessage(m)}\n`);
      }
      shown = view.messages.length;
      for (const t of view.threads) {
        if (stages.get(t.threadId) !== t.stage) io.stdout(`  thread ${t.threadId}: ${t.stage}${t.unresolvedReason ? ` (${t.unresolvedReason})` : ''}\n`);
        stages.set(t.threadId, t.stage);
      }
      if (view.status === 'complete') {
        io.stdout(`debate complete: ${view.outcome ?? 'no outcome'}\n`);
        return EXIT.ok;
      }
      if (io.signal?.aborted) return EXIT.ok;
      await new Promise((resolve) => setTimeout(resolve, interval));
    }
  },
};

export const debateCommands: CommandSpec[] = [debateOpen, debateList, debateShow, debateWatch];
