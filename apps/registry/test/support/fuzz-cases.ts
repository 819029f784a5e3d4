// Hostile requests for the registry, as fast-check arbitraries. Each arbitrary yields a recipe
// (plain data, so fast-check can print and shrink it); `buildCase` turns a recipe into the bytes to
// send and the ONE error code the service must answer with, derived from how the recipe was made
// and the order of the checks documented in libs/messaging/README.md ("What a command goes
// through"): size and JSON, envelope schema, signature present, issuedAt fresh, actor known and
// active, signature valid, type of the subject and payload, roles, then the decider.
// Signatures, ids and timestamps are made when the case is built (at run time), so that a shrunk
// or replayed run is signed as fresh as the first.
import { randomUUID } from 'node:crypto';
import { commandBySubject, commandsOf, DisableAgent, queryBySubject, RegisterAgent, RotateAgentKey, UpdateAgent, type CommandDefinition, type ErrorCode } from '@agora/contracts';
import { signCommand, type KeyPair, type SignedCommand } from '@agora/identity';
import fc from 'fast-check';

/** The request size limit of a service (DEFAULT_MAX_PAYLOAD). */
export const MAX_BODY = 256 * 1024;
/** The accepted issuedAt window the world's service runs with. */
export const MAX_CLOCK_SKEW_MS = 300_000;

/**
 * Who exists in a fuzz world. `root` is the bootstrap operator (from configuration); the others are
 * registered by root at set-up: alice an active operator, bob an observer, carol an operator that
 * was then disabled, target an executive that the commands act on. Strangers are registered nowhere.
 */
export interface Cast {
  root: KeyPair;
  alice: KeyPair;
  bob: KeyPair;
  carol: KeyPair;
  target: KeyPair;
  stranger: KeyPair;
}
export type Member = keyof Cast;

/** What a world remembers between cases: envelopes it saw accepted (for replays). */
export interface Accepted {
  envelope: SignedCommand;
  result: Record<string, unknown>;
}

export type Body = { json: unknown } | { bytes: Uint8Array };
export interface BuiltCase {
  subject: string;
  body: Body;
  /** The error code the reply must carry, or `replay`: the first result again. */
  expected: ErrorCode | { replayOf: Accepted };
}

type CommandType = 'RegisterAgent' | 'UpdateAgent' | 'RotateAgentKey' | 'DisableAgent';
const DEFINITIONS: Record<CommandType, CommandDefinition> = { RegisterAgent, UpdateAgent, RotateAgentKey, DisableAgent };
const TYPES = Object.keys(DEFINITIONS) as CommandType[];
const ROLES = ['executive', 'reviewer', 'validator', 'operator', 'observer'] as const;
const ENVELOPE_FIELDS = ['commandId', 'type', 'actor', 'issuedAt', 'payload', 'correlationId', 'causationId', 'signature'] as const;
const REQUIRED_ENVELOPE_FIELDS = ['commandId', 'type', 'actor', 'issuedAt', 'payload'] as const;
type EnvelopeField = (typeof ENVELOPE_FIELDS)[number];

const REQUIRED_PAYLOAD: Record<CommandType, readonly string[]> = {
  RegisterAgent: ['agentId', 'publicKey', 'displayName', 'roles'],
  UpdateAgent: ['agentId'],
  RotateAgentKey: ['agentId', 'publicKey'],
  DisableAgent: ['agentId', 'reason'],
};
const PROFILE_FIELDS = ['displayName', 'roles', 'constitutions', 'specializations', 'trustScore', 'health', 'risk'] as const;
/** Health and risk come in through ReportHealth only: UpdateAgent takes the rest of the profile. */
const UPDATE_FIELDS = ['displayName', 'roles', 'constitutions', 'specializations', 'trustScore'] as const;
const PAYLOAD_FIELDS: Record<CommandType, readonly string[]> = {
  RegisterAgent: ['agentId', 'publicKey', ...PROFILE_FIELDS],
  UpdateAgent: ['agentId', ...UPDATE_FIELDS],
  RotateAgentKey: ['agentId', 'publicKey'],
  DisableAgent: ['agentId', 'reason'],
};

// ---------------------------------------------------------------- valid parts

/** Never registered: `ghost-` is no agent of the cast. */
const ghostId = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,20}$/).map((s) => `ghost-${s}`);
const publicKeyText = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `ed25519:${Buffer.from(b).toString('base64url')}`);
/** Any code points (lone surrogates included); valid once trimmed to 1..100 UTF-16 units. */
const displayName = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((s) => s.trim().length > 0);
const reason = fc.string({ minLength: 1, maxLength: 60 }).filter((s) => s.trim().length > 0);
const constitution = fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/);
const specialization = fc.stringMatching(/^[a-z][a-z0-9_-]{0,10}$/);
const unit = fc.double({ min: 0, max: 1, noNaN: true });
const profile = {
  displayName,
  roles: fc.uniqueArray(fc.constantFrom(...ROLES), { minLength: 1, maxLength: 5 }),
  constitutions: fc.array(constitution, { maxLength: 4 }),
  specializations: fc.array(specialization, { maxLength: 4 }),
  trustScore: fc.integer({ min: 0, max: 1000 }),
  health: unit,
  risk: unit,
};

/** A payload that passes the command's schema (what the decider then makes of it is another matter). */
function validPayload(type: CommandType, agentId: fc.Arbitrary<string>): fc.Arbitrary<Record<string, unknown>> {
  switch (type) {
    case 'RegisterAgent':
      return fc.record({ agentId, publicKey: publicKeyText, ...profile }, { requiredKeys: ['agentId', 'publicKey', 'displayName', 'roles'] });
    case 'UpdateAgent': {
      const { health: _health, risk: _risk, ...updatable } = profile;
      return fc.record({ agentId, ...updatable }, { requiredKeys: ['agentId'] });
    }
    case 'RotateAgentKey':
      return fc.record({ agentId, publicKey: publicKeyText });
    case 'DisableAgent':
      return fc.record({ agentId, reason });
  }
}

interface Base {
  type: CommandType;
  payload: Record<string, unknown>;
}
/** A schema-valid command on `target` (or, for RegisterAgent, on a ghost). */
const base: fc.Arbitrary<Base> = fc.constantFrom(...TYPES).chain((type) => validPayload(type, type === 'RegisterAgent' ? ghostId : fc.constant('target')).map((payload) => ({ type, payload })));

// ---------------------------------------------------------------- bad parts

const notString = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }), fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }));
const notNumber = fc.oneof(fc.string(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 }), fc.constant({}), fc.integer().map(String));
const notArray = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }));
/** Strings JavaScript's trim() (and so zod's) removes entirely. */
const blank = fc.array(fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u2028', '\u3000', '\ufeff'), { maxLength: 6 }).map((a) => a.join(''));
const tooLong = (max: number) => fc.string({ maxLength: 20 }).map((s) => 'y'.repeat(max + 1) + s);

const badAgentId = fc.oneof(notString, fc.constantFrom('', 'Alice', 'a.b', 'a b', '-x', '_x', 'a*', 'a>', 'ä', 'x'.repeat(65)), fc.stringMatching(/^[A-Z][a-z0-9]{0,8}$/));
const badPublicKey = fc.oneof(
  notString,
  fc.constantFrom('', 'ed25519:', `ed25519:${'A'.repeat(42)}`, `ed25519:${'A'.repeat(44)}`, 'A'.repeat(43), `ED25519:${'A'.repeat(43)}`, `ed25519:${'A'.repeat(42)}=`, `ed25519:${'A'.repeat(42)}+`),
  publicKeyText.map((k) => k.replace('ed25519:', 'x25519:')),
);
const badRoleElement = fc.oneof(
  fc.string().filter((s) => !(ROLES as readonly string[]).includes(s)),
  fc.integer(),
  fc.constant(null),
  fc.constant({ role: 'operator' }),
  fc.constant(['operator']),
  fc.constantFrom('Operator', 'operator ', 'admin', 'root'),
);
const badRoles = fc.oneof(
  notArray,
  fc.constant([]),
  fc.array(fc.constantFrom(...ROLES), { minLength: 6, maxLength: 8 }),
  fc.tuple(fc.array(fc.constantFrom(...ROLES), { maxLength: 3 }), badRoleElement).map(([good, bad]) => [...good, bad]),
);
const badWordList = (word: fc.Arbitrary<string>, badWords: readonly unknown[]) =>
  fc.oneof(notArray, fc.array(word, { minLength: 17, maxLength: 20 }), fc.tuple(fc.array(word, { maxLength: 3 }), fc.constantFrom(...badWords)).map(([good, bad]) => [...good, bad]));
const badTrustScore = fc.oneof(
  notNumber,
  fc.integer({ min: 1001 }),
  fc.integer({ max: -1 }),
  fc.double({ min: 0.001, max: 999.999, noNaN: true }).filter((x) => !Number.isInteger(x)),
);
const badUnit = fc.oneof(notNumber, fc.double({ min: 1.000001, max: 1e12, noNaN: true }), fc.double({ min: -1e12, max: -0.000001, noNaN: true }));

const BAD_VALUES: Record<string, fc.Arbitrary<unknown>> = {
  agentId: badAgentId,
  publicKey: badPublicKey,
  displayName: fc.oneof(notString, blank, tooLong(100)),
  roles: badRoles,
  constitutions: badWordList(constitution, ['Risk', '', '1risk', 'r'.repeat(33), 7, null, {}]),
  specializations: badWordList(specialization, ['Security', '', '-x', 's'.repeat(33), false]),
  trustScore: badTrustScore,
  health: badUnit,
  risk: badUnit,
  reason: fc.oneof(notString, blank, tooLong(500)),
};

const wrongEnvelopeValue = (field: EnvelopeField): fc.Arbitrary<unknown> =>
  field === 'payload' ? fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 })) : notString;

const badEnvelopeFormat: Record<EnvelopeField, fc.Arbitrary<unknown>> = {
  // A UUID is 36 characters: anything shorter is not one.
  commandId: fc.oneof(fc.string({ maxLength: 35 }), fc.constantFrom('5b0f8f7e3c1d4a8e9f610d2a7c4e9b13aaaa', '5b0f8f7e-3c1d-4a8e-9f61-0d2a7c4e9b1g', '{5b0f8f7e-3c1d-4a8e-9f61-0d2a7c4e9b1}')),
  type: fc.oneof(fc.constantFrom('', 'R', 'registerAgent', 'Register-Agent', 'Register.Agent', ' RegisterAgent', `A${'a'.repeat(64)}`), fc.stringMatching(/^[a-z0-9_][A-Za-z0-9]{0,10}$/)),
  actor: fc.constantFrom('', 'Root', 'root.x', 'ro ot', '-root', 'a'.repeat(65), 'root*', 'röot', 'root\n'),
  issuedAt: fc.constantFrom('', 'now', '2026-11-22', '2026-11-22T10:00:00', '2026-11-22 10:00:00Z', '1763800000000', '22/11/2026 10:00', 'T10:00:00Z', 'Sun Nov 22 2026 10:00:00 GMT+0000'),
  payload: fc.constant('{}'),
  correlationId: fc.oneof(fc.constant(''), tooLong(100)),
  causationId: fc.oneof(fc.constant(''), tooLong(100)),
  signature: fc.oneof(
    fc.constantFrom('', 'a'.repeat(85), 'a'.repeat(87), `${'a'.repeat(85)}=`, '+'.repeat(86), ' '.repeat(86), '/'.repeat(86)),
    fc.string({ maxLength: 90 }).filter((s) => !/^[A-Za-z0-9_-]{86}$/.test(s)),
  ),
};

/** Keys that are no field of the object at that level, including the ones that trip up naive code. */
const extraKey = (known: readonly string[]) =>
  fc
    .oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'extra', '', ' commandId', 'agentID', 'Signature', 'signature '), fc.string({ maxLength: 12 }))
    .filter((k) => !known.includes(k));

/** Copies an object with one key set as an own property (`__proto__` too, as JSON.parse would make it). */
function withKey(object: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy = { ...object };
  Object.defineProperty(copy, key, { value, enumerable: true, configurable: true, writable: true });
  return copy;
}
function without(object: Record<string, unknown>, key: string): Record<string, unknown> {
  const copy = { ...object };
  delete copy[key];
  return copy;
}

// ---------------------------------------------------------------- recipes

const subjectOfType = (type: CommandType) => DEFINITIONS[type].subject;
/** Subjects under agora.cmd.registry that no registry command or query is served on. */
const SERVED = new Set([...commandsOf('registry').map((c) => c.subject)]);
const unservedSubject = fc
  .oneof(
    fc.array(fc.stringMatching(/^[a-z0-9_]{1,10}$/), { minLength: 1, maxLength: 4 }).map((t) => `agora.cmd.registry.${t.join('.')}`),
    fc.constantFrom('agora.cmd.registry.agent', 'agora.cmd.registry.agent.register.now', 'agora.cmd.registry.agent.Register', 'agora.cmd.registry.agents.register', 'agora.cmd.registry.agent.update_agent'),
  )
  .filter((s) => !SERVED.has(s) && commandBySubject(s) === undefined && queryBySubject(s) === undefined);

const staleOffset = fc.tuple(fc.boolean(), fc.integer({ min: MAX_CLOCK_SKEW_MS + 5_000, max: 10 * 365 * 86_400_000 })).map(([past, ms]) => (past ? -ms : ms));
const member = (...m: Member[]) => fc.constantFrom(...m);

export type Recipe =
  | { kind: 'random-bytes'; type: CommandType; bytes: Uint8Array }
  | { kind: 'random-json'; type: CommandType; json: string }
  | { kind: 'not-an-object'; type: CommandType; value: unknown }
  | { kind: 'empty-body'; type: CommandType }
  | { kind: 'truncated'; base: Base; cut: number }
  | { kind: 'trailing-garbage'; base: Base; garbage: string }
  | { kind: 'invalid-utf8'; base: Base; bytes: readonly number[]; at: number }
  | { kind: 'envelope-missing'; base: Base; field: string }
  | { kind: 'envelope-wrong-type'; base: Base; field: EnvelopeField; value: unknown }
  | { kind: 'envelope-bad-format'; base: Base; field: EnvelopeField; value: unknown }
  | { kind: 'envelope-extra'; base: Base; key: string; value: unknown }
  | { kind: 'unsigned'; base: Base; actor: string; staleBy: number }
  | { kind: 'payload-missing'; base: Base; field: string }
  | { kind: 'payload-bad-value'; base: Base; field: string; value: unknown }
  | { kind: 'payload-extra'; base: Base; key: string; value: unknown }
  | { kind: 'stale'; base: Base; actor: 'alice' | 'carol' | 'ghost'; offsetMs: number }
  | { kind: 'unknown-actor'; base: Base; actor: string; signer: Member }
  | { kind: 'disabled-actor'; base: Base; signer: Member }
  | { kind: 'foreign-key'; base: Base; actor: 'root' | 'alice' | 'target'; signer: Member }
  | { kind: 'payload-smuggled'; base: Base; key: string; value: unknown }
  | { kind: 'tampered'; base: Base; what: 'payload' | 'issuedAt' | 'commandId' | 'type' | 'actor' | 'correlationId'; shiftMs: number }
  | { kind: 'signature-of-another'; base: Base; other: Base }
  | { kind: 'wrong-subject'; base: Base; subjectType: CommandType }
  | { kind: 'unknown-type'; base: Base; type: string }
  | { kind: 'unserved-subject'; base: Base; subject: string }
  | { kind: 'forbidden'; base: Base; signer: 'bob' | 'target' }
  | { kind: 'not-found'; type: 'UpdateAgent' | 'RotateAgentKey' | 'DisableAgent'; payload: Record<string, unknown> }
  | { kind: 'illegal-state'; type: CommandType; payload: Record<string, unknown> }
  | { kind: 'replay'; pick: number }
  | { kind: 'oversized'; shape: 'signed' | 'json' | 'bytes'; base: Base; size: number }
  | { kind: 'size-boundary'; delta: -1 | 0 | 1 | 2; type: CommandType };

const commandType = fc.constantFrom(...TYPES);
const payloadFault = <K extends string, F extends object>(kind: K, fault: (t: CommandType) => fc.Arbitrary<F>): fc.Arbitrary<{ kind: K; base: Base } & F> =>
  commandType.chain((t) => fc.record({ base: validPayload(t, t === 'RegisterAgent' ? ghostId : fc.constant('target')).map((payload): Base => ({ type: t, payload })), fault: fault(t) })).map(({ base: b, fault: f }) => ({ kind, base: b, ...f }));

/** Every kind of hostile request, weighted towards the cheap ones; oversized bodies are rarer (they cost bandwidth). */
export const recipes: fc.Arbitrary<Recipe> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('random-bytes' as const), type: commandType, bytes: fc.uint8Array({ maxLength: 600 }) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('random-json' as const), type: commandType, json: fc.json({ maxDepth: 3 }) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('not-an-object' as const), type: commandType, value: fc.oneof(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }), fc.string(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('empty-body' as const), type: commandType }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('truncated' as const), base, cut: fc.double({ min: 0, max: 0.999, noNaN: true }) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('trailing-garbage' as const), base, garbage: fc.constantFrom(',', '}', ']', 'x', '{}', '"', '0', 'null', ',"a":1}') }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('invalid-utf8' as const),
      base,
      bytes: fc.constantFrom([0xff], [0xfe], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]),
      at: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('envelope-missing' as const), base, field: fc.constantFrom(...REQUIRED_ENVELOPE_FIELDS) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('envelope-wrong-type' as const), base, field: fc.constantFrom(...ENVELOPE_FIELDS) }).chain((r) => wrongEnvelopeValue(r.field).map((value) => ({ ...r, value }))), weight: 3 },
  {
    arbitrary: fc
      .record({ kind: fc.constant('envelope-bad-format' as const), base, field: fc.constantFrom(...ENVELOPE_FIELDS.filter((f) => f !== 'payload')) })
      .chain((r) => badEnvelopeFormat[r.field].map((value) => ({ ...r, value }))),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant('envelope-extra' as const), base, key: extraKey(ENVELOPE_FIELDS), value: fc.jsonValue({ maxDepth: 1 }) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('unsigned' as const), base, actor: fc.oneof(fc.constantFrom('root', 'alice', 'carol'), ghostId), staleBy: fc.oneof(fc.constant(0), staleOffset) }), weight: 2 },
  { arbitrary: payloadFault('payload-missing' as const, (t) => fc.constantFrom(...REQUIRED_PAYLOAD[t]).map((field) => ({ field }))), weight: 2 },
  { arbitrary: payloadFault('payload-bad-value' as const, (t) => fc.constantFrom(...PAYLOAD_FIELDS[t]).chain((field) => BAD_VALUES[field]!.map((value) => ({ field, value })))), weight: 5 },
  { arbitrary: payloadFault('payload-extra' as const, (t) => fc.tuple(extraKey(PAYLOAD_FIELDS[t]), fc.jsonValue({ maxDepth: 1 })).map(([key, value]) => ({ key, value }))), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('stale' as const), base, actor: fc.constantFrom('alice' as const, 'carol' as const, 'ghost' as const), offsetMs: staleOffset }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('unknown-actor' as const), base, actor: ghostId, signer: member('stranger', 'alice', 'root') }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('disabled-actor' as const), base, signer: member('carol', 'stranger', 'root') }), weight: 1 },
  {
    arbitrary: fc
      .record({ kind: fc.constant('foreign-key' as const), base, actor: fc.constantFrom('root' as const, 'alice' as const, 'target' as const), signer: member('stranger', 'bob', 'carol', 'alice', 'root', 'target') })
      .filter((r) => r.signer !== r.actor),
    weight: 3,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('payload-smuggled' as const), base, key: fc.oneof(fc.constant('__proto__'), extraKey([])), value: fc.jsonValue({ maxDepth: 1 }) }).filter((r) => !Object.hasOwn(r.base.payload, r.key)),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('tampered' as const),
      base,
      what: fc.constantFrom('payload' as const, 'issuedAt' as const, 'commandId' as const, 'type' as const, 'actor' as const, 'correlationId' as const),
      shiftMs: fc.integer({ min: 1, max: 60_000 }),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant('signature-of-another' as const), base, other: base }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('wrong-subject' as const), base, subjectType: commandType }).filter((r) => r.subjectType !== r.base.type), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('unknown-type' as const), base, type: fc.stringMatching(/^[A-Z][A-Za-z0-9]{1,20}$/) }).filter((r) => r.type !== r.base.type), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('unserved-subject' as const), base, subject: unservedSubject }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('forbidden' as const), base, signer: fc.constantFrom('bob' as const, 'target' as const) }), weight: 2 },
  {
    arbitrary: fc
      .constantFrom('UpdateAgent' as const, 'RotateAgentKey' as const, 'DisableAgent' as const)
      .chain((t) => validPayload(t, ghostId).map((payload) => ({ kind: 'not-found' as const, type: t, payload }))),
    weight: 2,
  },
  {
    arbitrary: fc.oneof(
      // Commands on carol, who is disabled.
      fc.constantFrom('UpdateAgent' as const, 'RotateAgentKey' as const).chain((t) => validPayload(t, fc.constant('carol')).map((payload) => ({ kind: 'illegal-state' as const, type: t as CommandType, payload }))),
      // Registering target again with another key.
      validPayload('RegisterAgent', fc.constant('target')).map((payload) => ({ kind: 'illegal-state' as const, type: 'RegisterAgent' as CommandType, payload })),
    ),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('replay' as const), pick: fc.nat() }), weight: 2 },
  {
    arbitrary: fc.record({ kind: fc.constant('oversized' as const), shape: fc.constantFrom('signed' as const, 'json' as const, 'bytes' as const), base, size: fc.integer({ min: MAX_BODY + 1, max: 1_000_000 }) }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant('size-boundary' as const), delta: fc.constantFrom(-1 as const, 0 as const, 1 as const, 2 as const), type: commandType }), weight: 1 },
);

// ---------------------------------------------------------------- building a case

export interface World {
  cast: Cast;
  accepted: readonly Accepted[];
}

const encoder = new TextEncoder();

/** Signs `payload` as `actor` with `signer`'s key, issued `offsetMs` from now. */
export function signAs(world: World, type: string, payload: Record<string, unknown>, actor: string, signer: Member, offsetMs = 0, extra: { correlationId?: string } = {}): SignedCommand {
  return signCommand({ commandId: randomUUID(), type, actor, issuedAt: new Date(Date.now() + offsetMs).toISOString(), payload, ...extra }, world.cast[signer].secretKey);
}

/** A command alice (an active operator) signed properly. */
const byAlice = (world: World, b: Base) => signAs(world, b.type, b.payload, 'alice', 'alice');

function padTo(size: number, prefix: string, suffix: string): string {
  return prefix + 'p'.repeat(Math.max(0, size - prefix.length - suffix.length)) + suffix;
}

export function buildCase(recipe: Recipe, world: World): BuiltCase {
  const on = (t: CommandType) => subjectOfType(t);
  switch (recipe.kind) {
    // Not UTF-8 JSON objects: refused before anything else is looked at.
    case 'random-bytes':
      return { subject: on(recipe.type), body: { bytes: recipe.bytes }, expected: 'invalid_command' };
    case 'random-json':
      return { subject: on(recipe.type), body: { bytes: encoder.encode(recipe.json) }, expected: 'invalid_command' };
    case 'not-an-object':
      return { subject: on(recipe.type), body: { json: recipe.value }, expected: 'invalid_command' };
    case 'empty-body':
      return { subject: on(recipe.type), body: { bytes: new Uint8Array(0) }, expected: 'invalid_command' };
    case 'truncated': {
      // A strict prefix of a JSON object is never valid JSON: its closing brace is missing.
      const text = JSON.stringify(byAlice(world, recipe.base));
      return { subject: on(recipe.base.type), body: { bytes: encoder.encode(text.slice(0, Math.floor(recipe.cut * text.length))) }, expected: 'invalid_command' };
    }
    case 'trailing-garbage':
      return { subject: on(recipe.base.type), body: { bytes: encoder.encode(JSON.stringify(byAlice(world, recipe.base)) + recipe.garbage) }, expected: 'invalid_command' };
    case 'invalid-utf8': {
      // Invalid UTF-8 inside an otherwise valid, validly signed envelope: refused, not decoded to U+FFFD.
      const bytes = encoder.encode(JSON.stringify(byAlice(world, recipe.base)));
      const at = 1 + Math.floor(recipe.at * (bytes.length - 2));
      return { subject: on(recipe.base.type), body: { bytes: Buffer.concat([bytes.subarray(0, at), Buffer.from(recipe.bytes), bytes.subarray(at)]) }, expected: 'invalid_command' };
    }

    // Envelope faults, made after signing: the schema check comes first.
    case 'envelope-missing':
      return { subject: on(recipe.base.type), body: { json: without({ ...byAlice(world, recipe.base) }, recipe.field) }, expected: 'invalid_command' };
    case 'envelope-wrong-type':
    case 'envelope-bad-format':
      return { subject: on(recipe.base.type), body: { json: withKey({ ...byAlice(world, recipe.base) }, recipe.field, recipe.value) }, expected: 'invalid_command' };
    case 'envelope-extra':
      return { subject: on(recipe.base.type), body: { json: withKey({ ...byAlice(world, recipe.base) }, recipe.key, recipe.value) }, expected: 'invalid_command' };
    case 'unsigned': {
      // No signature: refused as unsigned before freshness or the actor are looked at.
      const envelope = signAs(world, recipe.base.type, recipe.base.payload, recipe.actor, 'alice', recipe.staleBy);
      return { subject: on(recipe.base.type), body: { json: without({ ...envelope }, 'signature') }, expected: 'unsigned_command' };
    }

    // Payload faults, signed by an operator: the payload is checked after the signature.
    case 'payload-missing':
      return { subject: on(recipe.base.type), body: { json: signAs(world, recipe.base.type, without(recipe.base.payload, recipe.field), 'alice', 'alice') }, expected: 'invalid_command' };
    case 'payload-bad-value':
      return { subject: on(recipe.base.type), body: { json: signAs(world, recipe.base.type, withKey(recipe.base.payload, recipe.field, recipe.value), 'alice', 'alice') }, expected: 'invalid_command' };
    case 'payload-extra':
      return { subject: on(recipe.base.type), body: { json: signAs(world, recipe.base.type, withKey(recipe.base.payload, recipe.key, recipe.value), 'alice', 'alice') }, expected: 'invalid_command' };

    // Time, identity and signature.
    case 'stale': {
      // Freshness is checked before the actor: stale whoever signs it, known, disabled or not.
      const actor = recipe.actor === 'ghost' ? 'ghost-stale' : recipe.actor;
      const signer: Member = recipe.actor === 'carol' ? 'carol' : recipe.actor === 'alice' ? 'alice' : 'stranger';
      return { subject: on(recipe.base.type), body: { json: signAs(world, recipe.base.type, recipe.base.payload, actor, signer, recipe.offsetMs) }, expected: 'stale_command' };
    }
    case 'unknown-actor':
      return { subject: on(recipe.base.type), body: { json: signAs(world, recipe.base.type, recipe.base.payload, recipe.actor, recipe.signer) }, expected: 'unknown_actor' };
    case 'disabled-actor':
      return { subject: on(recipe.base.type), body: { json: signAs(world, recipe.base.type, recipe.base.payload, 'carol', recipe.signer) }, expected: 'actor_disabled' };
    case 'foreign-key':
      // Signed by one agent, naming another (active) one as the actor.
      return { subject: on(recipe.base.type), body: { json: signAs(world, recipe.base.type, recipe.base.payload, recipe.actor, recipe.signer) }, expected: 'bad_signature' };
    case 'payload-smuggled': {
      // A field added to the payload of a signed envelope on its way: the signature no longer covers
      // the payload (even for `__proto__`, which a schema's copy of the payload silently drops).
      const envelope = byAlice(world, recipe.base);
      return { subject: on(recipe.base.type), body: { json: { ...envelope, payload: withKey(envelope.payload, recipe.key, recipe.value) } }, expected: 'bad_signature' };
    }
    case 'tampered': {
      const envelope: Record<string, unknown> = { ...byAlice(world, recipe.base) };
      switch (recipe.what) {
        case 'payload':
          envelope['payload'] = { ...recipe.base.payload, agentId: `${String(recipe.base.payload['agentId'])}x` };
          break;
        case 'issuedAt':
          envelope['issuedAt'] = new Date(Date.parse(envelope['issuedAt'] as string) + recipe.shiftMs).toISOString();
          break;
        case 'commandId':
          envelope['commandId'] = randomUUID();
          break;
        case 'type':
          // Another command's type: the signature fails before the type is matched to the subject.
          envelope['type'] = TYPES.find((t) => t !== recipe.base.type);
          break;
        case 'actor':
          envelope['actor'] = 'root';
          break;
        case 'correlationId':
          envelope['correlationId'] = `c-${recipe.shiftMs}`;
          break;
      }
      return { subject: on(recipe.base.type), body: { json: envelope }, expected: 'bad_signature' };
    }
    case 'signature-of-another': {
      const envelope = byAlice(world, recipe.base);
      return { subject: on(recipe.base.type), body: { json: { ...envelope, signature: byAlice(world, recipe.other).signature } }, expected: 'bad_signature' };
    }

    // Valid envelopes in the wrong place.
    case 'wrong-subject':
      return { subject: on(recipe.subjectType), body: { json: byAlice(world, recipe.base) }, expected: 'invalid_command' };
    case 'unknown-type':
      return { subject: on(recipe.base.type), body: { json: signAs(world, recipe.type, recipe.base.payload, 'alice', 'alice') }, expected: 'invalid_command' };
    case 'unserved-subject':
      // Nobody listens there: the client hears "no responders" from NATS (or the bus).
      return { subject: recipe.subject, body: { json: byAlice(world, recipe.base) }, expected: 'unavailable' };

    // Valid, signed commands the service must refuse for who sends them or what they ask.
    case 'forbidden':
      return { subject: on(recipe.base.type), body: { json: signAs(world, recipe.base.type, recipe.base.payload, recipe.signer, recipe.signer) }, expected: 'forbidden' };
    case 'not-found':
      return { subject: on(recipe.type), body: { json: signAs(world, recipe.type, recipe.payload, 'alice', 'alice') }, expected: 'not_found' };
    case 'illegal-state':
      return { subject: on(recipe.type), body: { json: signAs(world, recipe.type, recipe.payload, 'alice', 'alice') }, expected: 'illegal_state' };

    case 'replay': {
      // Among envelopes still well inside the issuedAt window: an older one would rightly be stale.
      const fresh = world.accepted.filter((a) => Date.now() - Date.parse(a.envelope.issuedAt) < MAX_CLOCK_SKEW_MS - 60_000);
      const pool = fresh.length > 0 ? fresh : world.accepted.slice(-1);
      const first = pool[recipe.pick % pool.length]!;
      return { subject: on(first.envelope.type as CommandType), body: { json: first.envelope }, expected: { replayOf: first } };
    }

    // Size: the limit is checked before the body is even parsed.
    case 'oversized': {
      const subject = on(recipe.base.type);
      if (recipe.shape === 'bytes') return { subject, body: { bytes: new Uint8Array(recipe.size).fill(0xff) }, expected: 'payload_too_large' };
      if (recipe.shape === 'json') return { subject, body: { bytes: encoder.encode(padTo(recipe.size, '{"pad":"', '"}')) }, expected: 'payload_too_large' };
      // A validly signed envelope, too large only because of its payload.
      const signed = byAlice(world, { type: recipe.base.type, payload: { ...recipe.base.payload, padding: 'p'.repeat(recipe.size) } });
      return { subject, body: { json: signed }, expected: 'payload_too_large' };
    }
    case 'size-boundary': {
      const size = MAX_BODY + recipe.delta;
      const text = padTo(size, '{"pad":"', '"}');
      if (text.length !== size) throw new Error(`size-boundary built ${text.length} bytes, not ${size}`);
      return { subject: on(recipe.type), body: { bytes: encoder.encode(text) }, expected: size <= MAX_BODY ? 'invalid_command' : 'payload_too_large' };
    }
  }
}

/** The agent every case's follow-up command updates, and the operator that signs it. */
export const FOLLOW_UP = { agentId: 'target', signer: 'alice' as const };
export { displayName as displayNameArbitrary };
