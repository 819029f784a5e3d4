/**
 * The decision check: a command decided again on its stream's state before it, with the context
 * recorded beside it (service clock, actor roles, rules), produces exactly the events recorded.
 */
import { categoryOf, eventByType, type CommandDefinition } from '@agora/contracts';
import { COMMAND_ID_CATEGORY, type RecordedDecision } from '@agora/eventsourcing';
import type { RecordedEvent } from '@agora/eventstore';
import type { AggregateRules } from './rules.js';

/** A decision finding: the event it is about and why. */
export interface DecisionFinding {
  event: RecordedEvent;
  reason: string;
}

const finding = (event: RecordedEvent, reason: string): DecisionFinding => ({ event, reason });


/**
 * Where `again` (decided now) and `recorded` (the log) first differ, as a path and the two values,
 * or undefined when they agree. A field `again` has at the top level and `recorded` lacks is not a
 * difference when `recorded` satisfies its event's contract without it: an optional field added by a
 * later release, which the release that wrote the event did not set (docs/event-versions.md).
 */
export function decisionDifference(type: string, again: unknown, recorded: unknown): string | undefined {
  // Compared strictly first: when nothing differs, the lenient comparison (which skips checks) finds
  // nothing either, and the event's contract need not be parsed (most events agree).
  if (differenceAt('data', again, recorded, false) === undefined) return undefined;
  const lenient = eventByType(type)?.data.safeParse(recorded).success === true;
  return differenceAt('data', again, recorded, lenient);
}

function differenceAt(path: string, again: unknown, recorded: unknown, lenientHere: boolean): string | undefined {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (Array.isArray(again) && Array.isArray(recorded)) {
    if (again.length !== recorded.length) return `${path}: ${again.length} items decided again, ${recorded.length} in the log`;
    for (let i = 0; i < again.length; i++) {
      const d = differenceAt(`${path}[${i}]`, again[i], recorded[i], false);
      if (d) return d;
    }
    return undefined;
  }
  if (isObject(again) && isObject(recorded)) {
    // Every key of either side, `again`'s first (paths built only for a difference).
    for (const key of Object.keys(again)) {
      if (lenientHere && !(key in recorded)) continue;
      const d = differenceAt(key, again[key], recorded[key], false);
      if (d) return `${path}.${d}`;
    }
    for (const key of Object.keys(recorded)) {
      if (Object.hasOwn(again, key)) continue;
      const d = differenceAt(key, undefined, recorded[key], false);
      if (d) return `${path}.${d}`;
    }
    return undefined;
  }
  if (again === recorded) return undefined;
  return JSON.stringify(again) === JSON.stringify(recorded) ? undefined : `${path}: ${JSON.stringify(again)?.slice(0, 120)} decided again, ${JSON.stringify(recorded)?.slice(0, 120)} in the log`;
}

/**
 * Decides the commit's command again on `state` (the stream's state before it) under `rules`;
 * undefined when it produces exactly the events recorded, else what differs.
 */
export function decideAgain(rules: AggregateRules | undefined, state: unknown, commit: readonly RecordedEvent[], definition: CommandDefinition): DecisionFinding | undefined {
  const first = commit[0]!;
  // A command id reservation (commandid-<id>) records no decision: it carries the command's own
  // signed metadata (checked like every commit's) and reserves the id before the command's events.
  if (categoryOf(first.streamId) === COMMAND_ID_CATEGORY) return undefined;
  if (!rules) return finding(first, `no decider for the stream category ${categoryOf(first.streamId)}`);
  const meta = first.metadata;
  const decision = meta['decision'] as RecordedDecision | undefined;
  if (!decision || typeof decision.now !== 'string' || !Array.isArray(decision.actorRoles)) return finding(first, 'no recorded decision context (service clock, actor roles) to decide the command again');
  let payload = decision.payload;
  if (payload === undefined) {
    const parsed = definition.payload.safeParse(meta['commandPayload']);
    if (!parsed.success) return finding(first, `the signed payload does not satisfy ${definition.type}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    payload = parsed.data;
  }
  const command = { type: definition.type, payload, context: { now: decision.now, actor: String(meta['actor']), actorRoles: decision.actorRoles, commandId: String(meta['commandId']), rules: typeof decision.rules === 'number' ? decision.rules : 1 } };
  let produced: { type: string; data: unknown }[];
  try {
    produced = rules.decider.decide(command, state);
  } catch (error) {
    return finding(first, `decided again on the state before it, ${definition.type} is refused: ${(error as Error).message}`);
  }
  if (produced.length !== commit.length) return finding(first, `decided again, ${definition.type} produces ${produced.length} events (${produced.map((e) => e.type).join(', ') || 'none'}); the log has ${commit.length} (${commit.map((e) => e.type).join(', ')})`);
  for (let i = 0; i < commit.length; i++) {
    const recorded = commit[i]!;
    const again = produced[i]!;
    if (recorded.type !== again.type) return finding(recorded, `decided again, ${definition.type} produces ${again.type}; the log has ${recorded.type}`);
    const difference = decisionDifference(recorded.type, again.data, recorded.data);
    if (difference !== undefined) return finding(recorded, `decided again, ${definition.type} produces another ${again.type}: ${difference}`);
  }
  return undefined;
}
