import { z } from 'zod';
import { AgentId, EntityId, PublicKeyText, Role, ShortText, Timestamp } from '../common.js';
import { NextCursor, pageParams } from '../paging.js';
import { access, defineCommand, defineEvent, defineQuery } from '../define.js';

/** Constitutions a reviewer can hold (the tribunal's orthogonal mandates); free-form, lowercase. */
export const Constitution = z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, 'constitutions are lowercase words, e.g. risk, premise, evidence, execution');
export const Specialization = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'specializations are lowercase words, e.g. security');
export const TrustScore = z.number().int().min(0).max(1000).describe('0 to 1000');
/** Reported health (1 = fully healthy) and risk (0 = no risk) of an agent, each 0 to 1. */
export const Unit = z.number().min(0).max(1);

const agentProfile = {
  displayName: ShortText(100),
  roles: z.array(Role).min(1).max(5),
  constitutions: z.array(Constitution).max(16).default([]),
  specializations: z.array(Specialization).max(16).default([]),
  trustScore: TrustScore.default(500),
  health: Unit.default(1).describe('0 to 1, 1 = healthy'),
  risk: Unit.default(0).describe('0 to 1, 0 = no risk'),
};

export const RegisterAgent = defineCommand({
  type: 'RegisterAgent',
  service: 'registry',
  aggregate: 'agent',
  verb: 'register',
  roles: ['operator'],
  summary: 'Register an agent with its public key, roles, constitutions and specializations',
  payload: z.object({ agentId: AgentId, publicKey: PublicKeyText, ...agentProfile }).strict(),
});

export const UpdateAgent = defineCommand({
  type: 'UpdateAgent',
  service: 'registry',
  aggregate: 'agent',
  verb: 'update',
  roles: ['operator'],
  summary:
    "Change an agent's display name, roles, constitutions, specializations or trust score. Health and risk have one way in: ReportHealth (which runs the circuit breaker)",
  payload: z
    .object({
      agentId: AgentId,
      displayName: agentProfile.displayName.optional(),
      roles: agentProfile.roles.optional(),
      constitutions: z.array(Constitution).max(16).optional(),
      specializations: z.array(Specialization).max(16).optional(),
      trustScore: TrustScore.optional(),
    })
    .strict(),
});

export const RotateAgentKey = defineCommand({
  type: 'RotateAgentKey',
  service: 'registry',
  aggregate: 'agent',
  verb: 'rotate_key',
  roles: ['operator'],
  summary: "Replace an agent's public key; commands signed with the old key are refused from then on",
  payload: z.object({ agentId: AgentId, publicKey: PublicKeyText }).strict(),
});

export const DisableAgent = defineCommand({
  type: 'DisableAgent',
  service: 'registry',
  aggregate: 'agent',
  verb: 'disable',
  roles: ['operator'],
  summary: 'Disable an agent: its commands are refused with actor_disabled',
  payload: z.object({ agentId: AgentId, reason: ShortText(500) }).strict(),
});

export const EnableAgent = defineCommand({
  type: 'EnableAgent',
  service: 'registry',
  aggregate: 'agent',
  verb: 'enable',
  roles: ['operator'],
  summary:
    'Enable a disabled agent again: its commands are accepted from then on. With `publicKey`, under that key (recorded as a key rotation first, so the key it was disabled with, if it leaked, never signs again). An active agent: nothing to do, unless the key differs (RotateAgentKey does that)',
  payload: z.object({ agentId: AgentId, reason: ShortText(500), publicKey: PublicKeyText.optional().describe('The key it comes back under; absent: the one it had') }).strict(),
});

export const AgentRegistered = defineEvent({
  type: 'AgentRegistered',
  category: 'agent',
  summary: 'An agent was registered',
  data: z.object({
    agentId: AgentId,
    publicKey: PublicKeyText,
    displayName: z.string(),
    roles: z.array(Role),
    constitutions: z.array(z.string()),
    specializations: z.array(z.string()),
    trustScore: TrustScore,
    health: Unit,
    risk: Unit,
    registeredAt: Timestamp,
  }),
});

export const AgentUpdated = defineEvent({
  type: 'AgentUpdated',
  category: 'agent',
  summary: "An agent's profile changed (only the fields present changed). health and risk appear only in events recorded before ReportHealth took them over",
  data: z.object({
    agentId: AgentId,
    displayName: z.string().optional(),
    roles: z.array(Role).optional(),
    constitutions: z.array(z.string()).optional(),
    specializations: z.array(z.string()).optional(),
    trustScore: TrustScore.optional(),
    health: Unit.optional(),
    risk: Unit.optional(),
  }),
});

export const AgentKeyRotated = defineEvent({
  type: 'AgentKeyRotated',
  category: 'agent',
  summary: "An agent's public key was replaced",
  data: z.object({ agentId: AgentId, publicKey: PublicKeyText, previousPublicKey: PublicKeyText }),
});

export const AgentDisabled = defineEvent({
  type: 'AgentDisabled',
  category: 'agent',
  summary: 'An agent was disabled',
  data: z.object({ agentId: AgentId, reason: z.string(), disabledAt: Timestamp }),
});

export const AgentEnabled = defineEvent({
  type: 'AgentEnabled',
  category: 'agent',
  summary: 'A disabled agent was enabled again',
  data: z.object({ agentId: AgentId, reason: z.string(), enabledAt: Timestamp }),
});

/** What caused an automatic change: the event a service reacted to. */
export const EventCause = z.object({ eventId: z.string(), streamId: z.string(), type: z.string() });

export const AgentTrustAdjusted = defineEvent({
  type: 'AgentTrustAdjusted',
  category: 'agent',
  summary: "An agent's trust score changed in answer to something it did (e.g. proceeding despite objections), kept within 0 to 1000",
  data: z.object({
    agentId: AgentId,
    delta: z.number().int().describe('The change applied, after clamping to 0..1000'),
    trustScore: TrustScore.describe('The score after the change'),
    reason: z.string(),
    cause: EventCause,
  }),
});

/** The last resume of an agent's circuit breaker (a pause soon after it is a relapse). */
export const PreviousResume = z.object({ pause: z.number().int().min(1), sessionId: EntityId, resumedAt: Timestamp });

/** The circuit breaker as the registry's agent view shows it (seed 001; the rules are in libs/domain-common breaker.ts). */
export const BreakerView = z.object({
  state: z.enum(['closed', 'open']).describe('open: the agent is paused'),
  pauses: z.number().int().min(0),
  riskThreshold: Unit.nullable().describe("The agent's own threshold (set by a resolution); null: the policy's"),
  sessionId: EntityId.nullable().describe('The recovery session of the current pause'),
  pausedAt: Timestamp.nullable(),
  lastResume: PreviousResume.nullable(),
  lastReportAt: Timestamp.nullable(),
  enforced: z
    .object({ rateLimitPerMinute: z.number().int().nullable(), probation: z.object({ since: z.string(), until: z.string(), riskMargin: z.number(), reportEveryMs: z.number().int() }).nullable() })
    .nullable()
    .describe('The conditions of the last resume that Agora enforces (rate_limit, probation); null: none'),
});
export type BreakerView = z.infer<typeof BreakerView>;

export const AgentView = z.object({
  agentId: AgentId,
  publicKey: PublicKeyText,
  displayName: z.string(),
  roles: z.array(Role),
  constitutions: z.array(z.string()),
  specializations: z.array(z.string()),
  trustScore: TrustScore,
  health: Unit,
  risk: Unit,
  status: z.enum(['active', 'disabled']),
  breaker: BreakerView,
  registeredAt: Timestamp,
  revision: z.number().int(),
});
export type AgentView = z.infer<typeof AgentView>;

export const ListAgents = defineQuery({
  name: 'agents.list',
  service: 'registry',
  httpPath: 'agents',
  visibility: { agent: access.all, observer: access.none },
  summary: 'Registered agents in id order, optionally by role; paged',
  params: z.object({ role: Role.optional(), includeDisabled: z.union([z.boolean(), z.stringbool()]).optional(), ...pageParams }).strict(),
  result: z.object({ agents: z.array(AgentView), nextCursor: NextCursor }),
});

export const GetAgent = defineQuery({
  name: 'agents.get',
  service: 'registry',
  httpPath: 'agents/:agentId',
  visibility: { agent: access.all, observer: access.none },
  summary: 'One agent',
  params: z.object({ agentId: AgentId }).strict(),
  result: AgentView,
});

/** Issued by the registry itself in answer to another service's event (never by an agent): `cause` names that event. */
export const AdjustTrust = defineCommand({
  type: 'AdjustTrust',
  service: 'registry',
  aggregate: 'agent',
  verb: 'adjust_trust',
  roles: [],
  issuers: ['registry'],
  summary: "Change an agent's trust score in answer to something it did (e.g. ProceededDespiteObjections)",
  payload: z.object({ agentId: AgentId, delta: z.number().int(), reason: z.string(), cause: EventCause }).strict(),
});

export const ConfiguredKeys = z.object({
  operators: z.array(z.object({ agentId: AgentId, publicKey: PublicKeyText })).describe('Bootstrap operators (AGORA_OPERATOR_KEY_FILE, AGORA_OPERATOR_PUBLIC_KEY): they sign the first commands, and no event of the log names their keys'),
  services: z
    .record(z.string(), z.array(z.object({ publicKey: PublicKeyText, from: Timestamp.optional(), until: Timestamp.optional() })))
    .describe("The services' keys over time (AGORA_SERVICE_PUBLIC_KEYS when set, else the keys of the services of the registry's process): what they sign on their own behalf"),
});
export type ConfiguredKeys = z.infer<typeof ConfiguredKeys>;

export const GetConfiguredKeys = defineQuery({
  name: 'keys.configured',
  service: 'registry',
  httpPath: 'configured-keys',
  visibility: { agent: access.all, observer: access.none },
  summary:
    "The public keys configured outside the log, as the registry knows them: bootstrap operators and services. With the agents' keys from the log's registry events, they are what an auditor (or the web console's event log) needs to check every signature of the log",
  params: z.object({}).strict(),
  result: ConfiguredKeys,
});

