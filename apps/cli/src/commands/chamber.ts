import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ApproveChamberSession, CancelChamberSession, ProposeChamberSession, RejectChamberSession, type ChamberSessionView } from '@agora/contracts';
import type { Agora } from '@agora/sdk';
import { CommandFailed, EXIT, flag, listOption, requiredOption, stringOption, UsageError, type CommandSpec, type Io, type OptionSpec, type Parsed } from '../command.js';
import { actorOf, describeCommandResult, gatewayReader, gatewayUrl, MIN_POSITION_OPTION, printJson, queryGateway, readKeyFile, resultOf, sendCommand } from '../gateway-client.js';

/** The options of a command signed with a key file (shared by the commands that sign one). */
export const SIGNING: Record<string, OptionSpec> = {
  key: { type: 'string', short: 'k', value: '<file>', description: 'your key file: signs the command' },
  actor: { type: 'string', value: '<agentId>', description: "who signs (default: the key file's agentId)" },
  json: { type: 'boolean', description: 'print the whole reply as JSON' },
};

type Entry = ChamberSessionView['transcript'][number];
type Data = Record<string, unknown>;

const money = (x: unknown, currency: string) => `${Number(x).toFixed(4)} ${currency}`;
const indent = (text: string, by = '      ') => text.replace(/^/gm, by);

/** One transcript entry as a readable block (prompts and responses verbatim with --full, else their first lines). */
export function describeEntry(entry: Entry, view: ChamberSessionView, full = false): string {
  const d = entry.data as Data;
  const currency = view.summary.currency;
  const clip = (text: unknown) => {
    const s = String(text ?? '');
    return full || s.length <= 400 ? s : `${s.slice(0, 400)}… (${s.length - 400} more characters; --full shows all)`;
  };
  const head = `#${entry.revision} ${entry.recordedAt} ${entry.type}`;
  switch (entry.type) {
    case 'ChamberSessionProposed': {
      const panel = (d['panel'] as { model: string }[]).map((p) => p.model).join(', ');
      return `${head} by ${String(d['proposedBy'])}\n  question: ${String(d['question'])}\n  panel: ${panel}; arbiter: ${(d['arbiter'] as { model: string }).model}\n  at most ${money(d['maxCost'], currency)}; approve before ${String(d['approvalExpiresAt'])}`;
    }
    case 'ChamberSessionApproved':
      return `${head} by ${String(d['approvedBy'])}: ${money(d['reserved'], currency)} reserved in ${String(d['month'])}`;
    case 'ChamberSessionRejected':
      return `${head} by ${String(d['rejectedBy'])}: ${String(d['reason'])}`;
    case 'ChamberSessionCancelled':
      return `${head} by ${String(d['cancelledBy'])}: ${String(d['reason'])}`;
    case 'ChamberCallRequested':
      return `${head} ${String(d['callId'])} → ${String(d['model'])} (${String(d['step'])}, attempt ${String(d['attempt'])})${full ? `\n    system:\n${indent(String(d['system']))}\n    prompt:\n${indent(String(d['prompt']))}` : ''}`;
    case 'ChamberCallCompleted': {
      const usage = d['usage'] as { inputTokens: number; outputTokens: number };
      const output = d['output'] as { position?: string; verdict?: string } | null;
      const what = output?.verdict ? `verdict ${output.verdict}` : `position "${output?.position ?? '?'}"`;
      return `${head} ${String(d['callId'])} ← ${String(d['model'])}: ${what}; ${usage.inputTokens}+${usage.outputTokens} tokens, ${String(d['latencyMs'])} ms, ${money(d['cost'], currency)}\n    response:\n${indent(clip(d['text']))}`;
    }
    case 'ChamberCallFailed': {
      const error = d['error'] as { kind: string; status?: number; message: string; body?: string };
      return `${head} ${String(d['callId'])} ✗ ${String(d['model'])}: ${error.kind}${error.status ? ` ${error.status}` : ''}: ${error.message}${error.body ? `\n    provider said:\n${indent(clip(error.body))}` : ''}${d['costEstimated'] ? `\n    counted at its maximum cost ${money(d['cost'], currency)}` : ''}`;
    }
    case 'ChamberDivergenceMeasured': {
      const v = d['divergence'] as { stage: string; score: number; threshold: number; divergent: boolean; majority: { position: string; count: number; of: number } | null };
      return `${head} (${v.stage}): score ${v.score} ${v.divergent ? '>' : '<='} threshold ${v.threshold}: ${v.divergent ? 'divergent' : 'not divergent'}; majority ${v.majority ? `"${v.majority.position}" (${v.majority.count} of ${v.majority.of})` : 'none'}`;
    }
    case 'ChamberPositionChanged':
      return `${head}: panelist ${String(d['panelist'])} (label ${String(d['label'])} in the cross-examination) "${String(d['from'])}" → "${String(d['to'])}"${d['towardLabel'] ? ` toward ${String(d['towardLabel'])}` : ''}${d['towardBlindMajority'] ? ' (toward the blind majority)' : ''}`;
    case 'ChamberSessionConcluded': {
      const lines = [`${head}: ${String(d['outcome']).toUpperCase()}: ${String(d['reason'])}`];
      if (d['synthesis']) lines.push(`  synthesis: ${clip(d['synthesis'])}`);
      const rests = d['restsOn'] as { label: string; model: string }[];
      // The arbiter's labels are shuffled anew: a letter here may name another model than in the cross-examination.
      if (rests.length) lines.push(`  rests on (the arbiter's labels, shuffled anew): ${rests.map((r) => `${r.label} (${r.model})`).join(', ')}`);
      const arbiter = d['arbiter'] as { model: string; fallback: boolean } | null;
      if (arbiter) lines.push(`  arbiter: ${arbiter.model}${arbiter.fallback ? ' (fallback)' : ''}; own provider's answer among those it rests on: ${d['ownProviderWin'] === null ? 'n/a' : d['ownProviderWin'] ? 'yes' : 'no'}`);
      const majority = d['blindMajority'] as { position: string; count: number; of: number } | null;
      lines.push(`  blind majority: ${majority ? `"${majority.position}" (${majority.count} of ${majority.of})` : 'none'}${d['changedFromBlindMajority'] === null ? '' : `; outcome ${d['changedFromBlindMajority'] ? 'differs from' : 'matches'} it`}`);
      for (const e of d['errors'] as { model: string; error: { kind: string; status?: number; message: string } }[]) lines.push(`  error from ${e.model}: ${e.error.kind}${e.error.status ? ` ${e.error.status}` : ''}: ${e.error.message}`);
      lines.push(`  cost ${money(d['cost'], currency)}, ${(Number(d['wallTimeMs']) / 1000).toFixed(1)} s`);
      return lines.join('\n');
    }
    case 'ChamberFollowUpRecorded':
      return `${head} by ${String(d['by'])}: ${String(d['decision'])}: ${String(d['reason'])}`;
    default:
      return `${head}`;
  }
}

/** The whole transcript, readable. */
export function describeSession(view: ChamberSessionView, full = false): string {
  const s = view.summary;
  return [`chamber session ${s.sessionId}: ${s.status}; cost ${money(s.cost, s.currency)} of at most ${money(s.maxCost, s.currency)}`, ...view.transcript.map((e) => describeEntry(e, view, full))].join('\n');
}

const FINAL = new Set(['rejected', 'expired', 'consensus', 'no_consensus', 'failed', 'cancelled']);

/** The session's view; with `args` (a command's), read only once the gateway has reached --min-position. */
function fetchSession(reader: Agora, sessionId: string, args?: Parsed): Promise<ChamberSessionView> {
  return queryGateway(reader, 'GetChamberSession', { sessionId }, args);
}

/** Signs `type` with --key (as --actor), sends it through the gateway and prints the reply in one line (or JSON with --json). */
export async function sendSigned(args: Parsed, io: Io, command: string, type: string, payload: Record<string, unknown>): Promise<unknown> {
  const url = gatewayUrl(args, io, command);
  const keyPath = requiredOption(args, 'key', command);
  const key = readKeyFile(keyPath);
  const reply = await sendCommand(url, { type, actor: actorOf(args, key, keyPath, command), payload, key });
  if (flag(args, 'json') && reply.ok) printJson(io, reply);
  else io.stdout(`${describeCommandResult(type, resultOf(reply))}\n`);
  return reply;
}

export const chamberAsk: CommandSpec = {
  name: 'chamber ask',
  brief: 'propose a question to the panel (an operator must approve it)',
  summary: 'Propose a consultation of the Deliberation Chamber (ProposeChamberSession, signed by an executive or an operator). Nothing is called before an operator approves it.',
  usage: '<question> --key <file> --why <text> [options]',
  options: {
    ...SIGNING,
    why: { type: 'string', value: '<text>', description: 'why one model is not enough (required)' },
    context: { type: 'string', value: '<text>', description: 'what the panel should know' },
    'context-file': { type: 'string', value: '<file>', description: 'the context, read from a file' },
    panel: { type: 'string', multiple: true, value: '<p:m,...>', description: 'panel models (default: the configured panel)' },
    arbiter: { type: 'string', value: '<p:m>', description: 'arbiter model (default: the configured one)' },
    ceiling: { type: 'string', value: '<amount>', description: 'the most this session may cost' },
    session: { type: 'string', value: '<id>', description: 'session id (default: a new UUID)' },
    proposal: { type: 'string', value: '<proposalId>', description: 'link the consultation to a tribunal proposal' },
  },
  positionals: [{ name: 'question', required: true, description: 'the question' }],
  examples: ['agora chamber ask "Should we enter market X this year?" --why "a wrong call costs a year" --key pipeline.key.json'],
  async run(args, io) {
    const command = 'chamber ask';
    const why = requiredOption(args, 'why', command);
    const contextFile = stringOption(args, 'context-file');
    let context = stringOption(args, 'context') ?? '';
    if (contextFile) {
      try {
        context = readFileSync(contextFile, 'utf8');
      } catch (error) {
        throw new CommandFailed(undefined, `cannot read ${contextFile}: ${(error as Error).message}`);
      }
    }
    const ceilingText = stringOption(args, 'ceiling');
    const ceiling = ceilingText === undefined ? undefined : Number(ceilingText);
    if (ceiling !== undefined && !(Number.isFinite(ceiling) && ceiling >= 0)) throw new UsageError('--ceiling must be an amount, e.g. 2.5', command);
    const sessionId = stringOption(args, 'session') ?? randomUUID();
    const panel = listOption(args, 'panel');
    const arbiter = stringOption(args, 'arbiter');
    const proposal = stringOption(args, 'proposal');
    await sendSigned(args, io, command, ProposeChamberSession.type, {
      sessionId,
      question: args.positionals[0]!,
      context,
      rationale: why,
      ...(panel ? { panel } : {}),
      ...(arbiter ? { arbiter } : {}),
      ...(ceiling === undefined ? {} : { costCeiling: ceiling }),
      ...(proposal ? { link: { kind: 'proposal', id: proposal } } : {}),
    });
    io.stdout(`session ${sessionId}: awaiting an operator's approval (agora chamber approve ${sessionId} --key <operator key>)\n`);
    return EXIT.ok;
  },
};

export const chamberApprove: CommandSpec = {
  name: 'chamber approve',
  brief: "approve a session (operator): its maximum cost is reserved, then the panel is called",
  summary: 'Approve a chamber session (ApproveChamberSession, signed by an operator). Refused, nothing reserved or called, when the daily or monthly caps cannot cover its maximum cost.',
  usage: '<sessionId> --key <operator key file> [--note <text>]',
  options: { ...SIGNING, note: { type: 'string', value: '<text>', description: 'a note kept with the approval' } },
  positionals: [{ name: 'sessionId', required: true, description: 'the session' }],
  examples: ['agora chamber approve 3f0c... --key operator.key.json'],
  async run(args, io) {
    const note = stringOption(args, 'note');
    await sendSigned(args, io, 'chamber approve', ApproveChamberSession.type, { sessionId: args.positionals[0]!, ...(note ? { note } : {}) });
    return EXIT.ok;
  },
};

export const chamberReject: CommandSpec = {
  name: 'chamber reject',
  brief: 'reject a session (operator): nothing is called',
  summary: 'Reject a chamber session (RejectChamberSession, signed by an operator): nothing is called.',
  usage: '<sessionId> --reason <text> --key <operator key file>',
  options: { ...SIGNING, reason: { type: 'string', value: '<text>', description: 'why (kept in the log)' } },
  positionals: [{ name: 'sessionId', required: true, description: 'the session' }],
  examples: ['agora chamber reject 3f0c... --reason "not worth it" --key operator.key.json'],
  async run(args, io) {
    await sendSigned(args, io, 'chamber reject', RejectChamberSession.type, { sessionId: args.positionals[0]!, reason: requiredOption(args, 'reason', 'chamber reject') });
    return EXIT.ok;
  },
};

export const chamberCancel: CommandSpec = {
  name: 'chamber cancel',
  brief: 'cancel a session not yet concluded (its proposer or an operator): no further call is made',
  summary: 'Cancel a chamber session (CancelChamberSession, signed by its proposer or an operator): no further call is made; calls already in flight are recorded when they end and cost what they cost.',
  usage: '<sessionId> --reason <text> --key <file>',
  options: { ...SIGNING, reason: { type: 'string', value: '<text>', description: 'why (kept in the log)' } },
  positionals: [{ name: 'sessionId', required: true, description: 'the session' }],
  examples: ['agora chamber cancel 3f0c... --reason "the question is moot" --key operator.key.json'],
  async run(args, io) {
    await sendSigned(args, io, 'chamber cancel', CancelChamberSession.type, { sessionId: args.positionals[0]!, reason: requiredOption(args, 'reason', 'chamber cancel') });
    return EXIT.ok;
  },
};

export const chamberShow: CommandSpec = {
  name: 'chamber show',
  brief: 'the transcript of a session, readable',
  summary: 'Show a chamber session: every event in log order (prompts, responses, errors verbatim with --full), the outcome and its cost.',
  usage: '<sessionId> [--full] [--min-position <position>] [--json]',
  options: { full: { type: 'boolean', description: 'every prompt and response in full' }, ...MIN_POSITION_OPTION, json: { type: 'boolean', description: 'the query result as JSON' } },
  positionals: [{ name: 'sessionId', required: true, description: 'the session' }],
  examples: ['agora chamber show 3f0c... --full'],
  async run(args, io) {
    const view = await fetchSession(gatewayReader(args, io, 'chamber show'), args.positionals[0]!, args);
    if (flag(args, 'json')) printJson(io, view);
    else io.stdout(`${describeSession(view, flag(args, 'full'))}\n`);
    return EXIT.ok;
  },
};

export const chamberWatch: CommandSpec = {
  name: 'chamber watch',
  brief: 'follow a session live: phase, answers, cost so far',
  summary: 'Follow a chamber session until it is over: each new step as it is recorded (phase, which panelists answered, cost so far).',
  usage: '<sessionId> [--interval <ms>]',
  options: { interval: { type: 'string', value: '<ms>', description: 'how often to look (default 1000)' } },
  positionals: [{ name: 'sessionId', required: true, description: 'the session' }],
  examples: ['agora chamber watch 3f0c...'],
  async run(args, io) {
    const reader = gatewayReader(args, io, 'chamber watch');
    const interval = Number(stringOption(args, 'interval') ?? 1000);
    let shown = 0;
    for (;;) {
      const view = await fetchSession(reader, args.positionals[0]!);
      for (const entry of view.transcript.slice(shown)) io.stdout(`${describeEntry(entry, view)}\n`);
      if (view.transcript.length > shown) {
        const s = view.summary;
        io.stdout(`  [${s.status}] answered: ${s.answered.length ? s.answered.join(', ') : 'none yet'}; calls pending ${s.pendingCalls}; cost so far ${money(s.cost, s.currency)}\n`);
      }
      shown = view.transcript.length;
      if (FINAL.has(view.summary.status) && view.summary.pendingCalls === 0) return EXIT.ok;
      if (io.signal?.aborted) return EXIT.ok;
      await new Promise((resolve) => setTimeout(resolve, interval));
    }
  },
};

export const chamberCommands: CommandSpec[] = [chamberAsk, chamberApprove, chamberReject, chamberCancel, chamberWatch, chamberShow];
