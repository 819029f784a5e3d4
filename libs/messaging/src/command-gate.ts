import { AgoraError, authorizeSender, CommandEnvelope, type CommandDefinition } from '@agora/contracts';
import { verifyCommandSignature } from '@agora/identity';
import type { z } from 'zod';
import type { AgentDirectory, GateConditions, PausedAgent } from './directory.js';

const RATE_WINDOW_MS = 60_000;
const HEALTH_REPORT = 'ReportHealth';

/** A signed envelope that passed the schema. */
export type SignedEnvelope = CommandEnvelope & { signature: string };

/** What a command handler receives: every check of the gate has passed. */
export interface VerifiedCommand<P = unknown> {
  /** The envelope as received (its payload exactly as signed). */
  envelope: SignedEnvelope;
  definition: CommandDefinition;
  /** The payload parsed with the command's schema: defaults applied. */
  payload: P;
  actor: { agentId: string; roles: readonly string[] };
}

export const DEFAULT_MAX_CLOCK_SKEW_MS = 5 * 60_000;

export interface CommandGateOptions {
  directory: AgentDirectory;
  /** The commands this gate admits; a command arriving on the subject of one of them must be of its type. */
  commands: readonly CommandDefinition[];
  /** issuedAt may be this far from the service clock, either side. Default 5 minutes. */
  maxClockSkewMs?: number;
  /** The service clock, in ms since the epoch. */
  now?: () => number;
}

export interface IssueDetail {
  path: string;
  message: string;
}

/** zod issues as `{path, message}`, one per unknown field, so an agent sees exactly what to fix. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): { issues: IssueDetail[]; unknownFields: string[] } {
  const out: IssueDetail[] = [];
  const unknownFields: string[] = [];
  const pathOf = (path: readonly PropertyKey[]) => [...prefix, ...path].map(String).join('.');
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const path = pathOf([...issue.path, key]);
        unknownFields.push(path);
        out.push({ path, message: `unknown field "${key}"` });
      }
    } else {
      out.push({ path: pathOf(issue.path), message: issue.message });
    }
  }
  return { issues: out, unknownFields };
}

/** An `invalid_command` error listing every issue (and the unknown fields) of a zod parse. */
export function invalidCommand(what: string, issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): AgoraError {
  const described = describeIssues(issues, prefix);
  const summary = described.issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
  const details: Record<string, unknown> = { issues: described.issues };
  if (described.unknownFields.length > 0) details['unknownFields'] = described.unknownFields;
  return new AgoraError('invalid_command', `${what}: ${summary}`, details);
}

/**
 * What a paused agent may still send: the types in `paused.allowed` (its health reports, its part
 * in its recovery), and only about itself and its own recovery session: a payload naming another
 * `agentId` or another `sessionId` is refused (`forbidden`), so a paused reviewer cannot sign or
 * submit in another agent's recovery.
 */
export function checkPausedAgent(actor: string, paused: PausedAgent, commandType: string, payload: unknown): void {
  const { sessionId, pausedAt } = paused;
  const fields = (payload ?? {}) as { agentId?: unknown; sessionId?: unknown };
  let why: string | undefined;
  if (!paused.allowed.includes(commandType)) why = `${commandType} is refused until it resumes`;
  else if (fields.agentId !== undefined && fields.agentId !== actor) why = `${commandType} about another agent (${String(fields.agentId)}) is refused until it resumes; it may only report on itself`;
  else if (fields.sessionId !== undefined && fields.sessionId !== sessionId) {
    why = `${commandType} in another recovery session (${String(fields.sessionId)}) is refused until it resumes; it may only take part in its own recovery`;
  }
  if (why === undefined) return;
  throw new AgoraError('forbidden', `${actor} is paused by its circuit breaker since ${pausedAt ?? '?'} (recovery session ${sessionId ?? '?'}): ${why}`, {
    agentId: actor,
    sessionId,
    commandType,
  });
}

/**
 * The checks every incoming command passes before any handler runs (docs/decisions/0004-every-command-is-signed.md), in
 * this order, each with its own code: schema (`invalid_command`), signature present
 * (`unsigned_command`), issuedAt within the window (`stale_command`), actor known
 * (`unknown_actor`) and active (`actor_disabled`), signature valid under the actor's current key
 * (`bad_signature`), type matching the subject (`invalid_command`), the authorization table
 * (`authorizeSender`: a role of the command, `forbidden`; never a service-only command,
 * `service_only`), payload matching its schema (`invalid_command`), and an actor whose circuit breaker is
 * open sending anything but what it needs to recover (`forbidden`). Cheap checks come first, so a flood of
 * junk costs no directory lookups and no signature verifications.
 */
export class CommandGate {
  private readonly bySubject: ReadonlyMap<string, CommandDefinition>;
  private readonly maxClockSkewMs: number;
  private readonly now: () => number;
  /** Acceptance times (ms) in the last minute of each rate-limited actor. */
  private readonly recent = new Map<string, number[]>();

  constructor(private readonly options: CommandGateOptions) {
    this.bySubject = new Map(options.commands.map((c) => [c.subject, c]));
    this.maxClockSkewMs = options.maxClockSkewMs ?? DEFAULT_MAX_CLOCK_SKEW_MS;
    if (!(this.maxClockSkewMs >= 0)) throw new RangeError(`maxClockSkewMs must be >= 0, got ${this.maxClockSkewMs}`);
    this.now = options.now ?? Date.now;
  }

  /** Resolves with the verified command, or rejects with an AgoraError carrying the code. */
  async verify(subject: string, body: unknown): Promise<VerifiedCommand> {
    const parsed = CommandEnvelope.safeParse(body);
    if (!parsed.success) throw invalidCommand('invalid command envelope', parsed.error.issues);
    // The payload as received, not zod's copy of it: z.record drops a `__proto__` member, so the copy would verify and pass the payload schema while the message carried a field the signature never covered.
    const envelope = { ...parsed.data, payload: (body as { payload: Record<string, unknown> }).payload };
    const signature = envelope.signature;
    if (signature === undefined) throw new AgoraError('unsigned_command', 'the command carries no signature; sign it with the actor\'s key (see @agora/identity signCommand)');
    this.checkFreshness(envelope.issuedAt);

    const agent = await this.options.directory.get(envelope.actor);
    if (agent === undefined) throw new AgoraError('unknown_actor', `no agent "${envelope.actor}" is registered`, { actor: envelope.actor });
    if (agent.status !== 'active') throw new AgoraError('actor_disabled', `agent "${envelope.actor}" is disabled`, { actor: envelope.actor });
    const signed: SignedEnvelope = { ...envelope, signature };
    if (!verifyCommandSignature(signed, agent.publicKey)) {
      throw new AgoraError('bad_signature', `the signature does not verify under the registered key of "${envelope.actor}"`, { actor: envelope.actor });
    }

    const definition = this.bySubject.get(subject);
    if (definition === undefined) throw new AgoraError('invalid_command', `no command is served on ${subject}`, { subject });
    if (envelope.type !== definition.type) {
      throw new AgoraError('invalid_command', `type "${envelope.type}" does not match subject ${subject}, which takes "${definition.type}"`, { type: envelope.type, expectedType: definition.type });
    }
    // The authorization table (libs/contracts authorizeSender): a role of the command, and never a service-only command.
    const authorization = authorizeSender(definition, { actor: envelope.actor, roles: agent.roles });
    if (!authorization.allowed) {
      throw new AgoraError(authorization.code, authorization.reason, {
        commandType: definition.type,
        requiredRoles: [...definition.roles],
        actorRoles: [...agent.roles],
        ...(definition.issuers === undefined ? {} : { issuers: [...definition.issuers] }),
      });
    }
    const payload = definition.payload.safeParse(envelope.payload);
    if (!payload.success) throw invalidCommand(`invalid ${definition.type} payload`, payload.error.issues, ['payload']);
    if (agent.paused) checkPausedAgent(envelope.actor, agent.paused, definition.type, payload.data);
    if (agent.conditions) this.checkConditions(envelope.actor, agent.conditions, definition.type);
    return { envelope: signed, definition, payload: payload.data, actor: { agentId: envelope.actor, roles: [...agent.roles] } };
  }

  /**
   * The conditions of a resumed agent that every gate enforces: `probation` (a health report recent
   * enough before anything else; `forbidden`) and `rate_limit` (a sliding minute per actor in this
   * gate; `rate_limited`). Health reports pass both: they are how an agent on probation keeps acting.
   */
  private checkConditions(actor: string, conditions: GateConditions, commandType: string): void {
    if (commandType === HEALTH_REPORT) return;
    const now = this.now();
    const { probation, rateLimitPerMinute } = conditions;
    if (probation && now < Date.parse(probation.until)) {
      const last = Math.max(Date.parse(probation.since), probation.lastReportAt === null ? -Infinity : Date.parse(probation.lastReportAt));
      if (now - last > probation.reportEveryMs) {
        throw new AgoraError(
          'forbidden',
          `${actor} is on probation until ${probation.until} (a condition of its recovery): report its health (ReportHealth) at least every ${Math.round(probation.reportEveryMs / 60_000)} min before anything else; its last report is ${probation.lastReportAt ?? 'none since it resumed'}`,
          { agentId: actor, condition: 'probation', until: probation.until, reportEveryMs: probation.reportEveryMs, lastReportAt: probation.lastReportAt },
        );
      }
    }
    if (rateLimitPerMinute !== null) {
      const sent = (this.recent.get(actor) ?? []).filter((t) => now - t < RATE_WINDOW_MS);
      if (sent.length >= rateLimitPerMinute) {
        this.recent.set(actor, sent);
        const retryAfterMs = RATE_WINDOW_MS - (now - sent[0]!);
        throw new AgoraError('rate_limited', `${actor} may send ${rateLimitPerMinute} command${rateLimitPerMinute === 1 ? '' : 's'} per minute to this service (a condition of its recovery: rate_limit); retry in ${Math.ceil(retryAfterMs / 1000)} s`, {
          agentId: actor,
          condition: 'rate_limit',
          maxActionsPerMinute: rateLimitPerMinute,
          retryAfterMs,
        });
      }
      sent.push(now);
      this.recent.set(actor, sent);
    }
  }

  /** Replay protection: a captured command is only good for a few minutes. */
  private checkFreshness(issuedAt: string): void {
    const issued = Date.parse(issuedAt);
    const now = this.now();
    if (!Number.isFinite(issued) || Math.abs(now - issued) > this.maxClockSkewMs) {
      throw new AgoraError('stale_command', `issuedAt ${issuedAt} is more than ${Math.round(this.maxClockSkewMs / 1000)} s from the service clock (${new Date(now).toISOString()})`, {
        issuedAt,
        serviceTime: new Date(now).toISOString(),
        maxClockSkewMs: this.maxClockSkewMs,
      });
    }
  }
}
