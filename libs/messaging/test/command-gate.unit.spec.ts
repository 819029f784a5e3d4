import { AgoraError, type ErrorCode } from '@agora/contracts';
import { generateKeyPair } from '@agora/identity';
import { CommandGate, CompositeAgentDirectory, StaticAgentDirectory, type GateConditions } from '../src/index.js';
import { signed, widgetCatalog, widgetTeam } from '../src/testing.js';

const NOW = Date.parse('2030-01-01T12:00:00.000Z');
const ISSUED = new Date(NOW - 1_000);
const SERVICE = 'widgets';
const { CreateWidget, FailWidget, catalog } = widgetCatalog(SERVICE);
const team = widgetTeam();
const gate = new CommandGate({ directory: team.directory, commands: catalog.commands, now: () => NOW });

async function refusal(body: unknown, subject = CreateWidget.subject, g = gate): Promise<AgoraError> {
  try {
    await g.verify(subject, body);
  } catch (error) {
    if (error instanceof AgoraError) return error;
    throw error;
  }
  throw new Error('the gate let the command through');
}

async function expectCode(body: unknown, code: ErrorCode, subject?: string): Promise<AgoraError> {
  const error = await refusal(body, subject);
  expect(error.code).toBe(code);
  return error;
}

const create = (actor = 'operator', key = team.operator, payload: Record<string, unknown> = { widgetId: 'w1' }, issuedAt: Date | string = ISSUED) =>
  signed('CreateWidget', actor, key, payload, { issuedAt });

describe('CommandGate', () => {
  it('admits a signed command and hands over the parsed payload with defaults', async () => {
    const envelope = create();
    const verified = await gate.verify(CreateWidget.subject, envelope);
    expect(verified.payload).toEqual({ widgetId: 'w1', size: 1 });
    expect(verified.envelope).toEqual(envelope);
    expect(verified.definition).toBe(CreateWidget);
    expect(verified.actor).toEqual({ agentId: 'operator', roles: ['operator'] });
  });

  it('admits any one of the roles the command lists', async () => {
    await expect(gate.verify(CreateWidget.subject, create('executive', team.executive))).resolves.toBeDefined();
  });

  it('refuses a body that is not an envelope, naming the fields', async () => {
    const error = await expectCode({ type: 'CreateWidget' }, 'invalid_command');
    const paths = (error.details?.['issues'] as { path: string }[]).map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['commandId', 'actor', 'issuedAt', 'payload']));
  });

  it('names an unknown envelope field', async () => {
    const error = await expectCode({ ...create(), extra: 1 }, 'invalid_command');
    expect(error.details?.['unknownFields']).toEqual(['extra']);
    expect(error.message).toMatch(/unknown field "extra"/);
  });

  it('refuses an unsigned command', async () => {
    const { signature: _s, ...unsigned } = create();
    await expectCode(unsigned, 'unsigned_command');
  });

  it('refuses a command issued outside the window, either side', async () => {
    await expectCode(create('operator', team.operator, { widgetId: 'w1' }, new Date(NOW - 5 * 60_000 - 1)), 'stale_command');
    await expectCode(create('operator', team.operator, { widgetId: 'w1' }, new Date(NOW + 5 * 60_000 + 1)), 'stale_command');
    await expect(gate.verify(CreateWidget.subject, create('operator', team.operator, { widgetId: 'w1' }, new Date(NOW - 5 * 60_000)))).resolves.toBeDefined();
  });

  it('takes a configured window', async () => {
    const strict = new CommandGate({ directory: team.directory, commands: catalog.commands, now: () => NOW, maxClockSkewMs: 500 });
    expect((await refusal(create(), CreateWidget.subject, strict)).code).toBe('stale_command');
  });

  it('refuses an unknown actor', async () => {
    await expectCode(create('nobody', generateKeyPair()), 'unknown_actor');
  });

  it('refuses a disabled actor', async () => {
    await expectCode(create('retired', team.retired), 'actor_disabled');
  });

  it('refuses a signature by another agent\'s key', async () => {
    await expectCode(create('operator', team.executive), 'bad_signature');
  });

  it('refuses an envelope changed after signing', async () => {
    await expectCode({ ...create(), payload: { widgetId: 'w2' } }, 'bad_signature');
    await expectCode({ ...create(), actor: 'executive' }, 'bad_signature');
  });

  it('refuses a signature made with a key the actor no longer has', async () => {
    const rotated = new StaticAgentDirectory({ operator: { publicKey: generateKeyPair().publicKey, roles: ['operator'], status: 'active' } });
    const g = new CommandGate({ directory: rotated, commands: catalog.commands, now: () => NOW });
    expect((await refusal(create(), CreateWidget.subject, g)).code).toBe('bad_signature');
  });

  it('refuses a paused actor (circuit breaker open) with forbidden, except the commands it may still send', async () => {
    const pausedAt = '2030-01-01T11:59:00.000Z';
    const paused = new StaticAgentDirectory({ operator: { publicKey: team.operator.publicKey, roles: ['operator'], status: 'active', paused: { sessionId: 'operator-p1', pausedAt, allowed: [] } } });
    const g = new CommandGate({ directory: paused, commands: catalog.commands, now: () => NOW });
    const error = await refusal(create(), CreateWidget.subject, g);
    expect(error.code).toBe('forbidden');
    expect(error.message).toMatch(/paused by its circuit breaker since 2030-01-01T11:59:00.000Z \(recovery session operator-p1\): CreateWidget is refused/);
    expect(error.details).toEqual({ agentId: 'operator', sessionId: 'operator-p1', commandType: 'CreateWidget' });
    const allowing = new StaticAgentDirectory({ operator: { publicKey: team.operator.publicKey, roles: ['operator'], status: 'active', paused: { sessionId: 'operator-p1', pausedAt, allowed: ['CreateWidget'] } } });
    await expect(new CommandGate({ directory: allowing, commands: catalog.commands, now: () => NOW }).verify(CreateWidget.subject, create())).resolves.toMatchObject({ actor: { agentId: 'operator' } });
  });

  it('refuses a type that does not match the subject', async () => {
    const error = await expectCode(signed('FailWidget', 'operator', team.operator, { how: 'domain' }, { issuedAt: ISSUED }), 'invalid_command');
    expect(error.details).toEqual({ type: 'FailWidget', expectedType: 'CreateWidget' });
  });

  it('refuses a payload that fails its schema, naming the fields', async () => {
    const error = await expectCode(create('operator', team.operator, { widgetId: 'w1', size: 'big', color: 'red' }), 'invalid_command');
    expect(error.details?.['issues']).toEqual(
      expect.arrayContaining([
        { path: 'payload.size', message: expect.any(String) },
        { path: 'payload.color', message: 'unknown field "color"' },
      ]),
    );
    expect(error.details?.['unknownFields']).toEqual(['payload.color']);
  });

  it('refuses an actor without any role of the command', async () => {
    const error = await expectCode(create('observer', team.observer), 'forbidden');
    expect(error.details).toMatchObject({ requiredRoles: ['operator', 'executive'], actorRoles: ['observer'] });
    await expectCode(signed('FailWidget', 'executive', team.executive, { how: 'domain' }, { issuedAt: ISSUED }), 'forbidden', FailWidget.subject);
  });

  it('checks in the documented order: the cheap checks first', async () => {
    // Stale and unknown: stale wins, no directory lookup needed.
    await expectCode(create('nobody', generateKeyPair(), { widgetId: 'w1' }, new Date(NOW - 3_600_000)), 'stale_command');
    // Disabled and forged: disabled wins.
    await expectCode(create('retired', team.operator), 'actor_disabled');
    // Forged and bad payload: the signature is checked before the payload.
    await expectCode(create('operator', team.executive, { widgetId: 'w1', size: 'big' }), 'bad_signature');
  });
});

describe('directories', () => {
  it('CompositeAgentDirectory answers with the first directory that knows the agent', async () => {
    const [inRegistry, inConfig, root] = [generateKeyPair().publicKey, generateKeyPair().publicKey, generateKeyPair().publicKey];
    const registry = new StaticAgentDirectory({ operator: { publicKey: inRegistry, roles: ['operator'], status: 'disabled' } });
    const bootstrap = new StaticAgentDirectory([
      ['operator', { publicKey: inConfig, roles: ['operator'], status: 'active' }],
      ['root', { publicKey: root, roles: ['operator'], status: 'active' }],
    ]);
    const directory = new CompositeAgentDirectory(registry, bootstrap);
    expect(await directory.get('operator')).toEqual({ publicKey: inRegistry, roles: ['operator'], status: 'disabled' });
    expect((await directory.get('root'))?.publicKey).toBe(root);
    expect(await directory.get('nobody')).toBeUndefined();
  });

  it('StaticAgentDirectory refuses a malformed key at once, naming the agent', () => {
    expect(() => new StaticAgentDirectory({ root: { publicKey: 'ed25519:nope', roles: ['operator'], status: 'active' } })).toThrow(/agent "root"/);
  });
});

describe("CommandGate: a resumed agent's conditions", () => {
  const key = generateKeyPair();
  let now = NOW;
  const withConditions = (conditions: GateConditions) =>
    new CommandGate({ directory: new StaticAgentDirectory({ exec: { publicKey: key.publicKey, roles: ['executive'], status: 'active', conditions } }), commands: catalog.commands, now: () => now });
  const send = (g: CommandGate, i: number) => g.verify(CreateWidget.subject, signed('CreateWidget', 'exec', key, { widgetId: `w${i}` }, { issuedAt: new Date(now - 1_000) }));

  it('rate_limit: refuses what is beyond the limit in a sliding minute with rate_limited, then admits again', async () => {
    now = NOW;
    const g = withConditions({ rateLimitPerMinute: 3, probation: null });
    for (let i = 0; i < 3; i++) await expect(send(g, i)).resolves.toBeDefined();
    const refused = await send(g, 3).catch((e: unknown) => e as AgoraError);
    expect(refused).toMatchObject({ code: 'rate_limited', details: { condition: 'rate_limit', maxActionsPerMinute: 3, retryAfterMs: 60_000 } });
    now = NOW + 60_001;
    await expect(send(g, 4)).resolves.toBeDefined();
  });

  it('probation: refuses anything but a health report while the last report is too old, and nothing once it ends', async () => {
    const since = new Date(NOW - 2 * 3_600_000).toISOString();
    const probation = { since, until: new Date(NOW + 3_600_000).toISOString(), reportEveryMs: 1_800_000 };
    now = NOW;
    const stale = withConditions({ rateLimitPerMinute: null, probation: { ...probation, lastReportAt: new Date(NOW - 3_600_000).toISOString() } });
    await expect(send(stale, 1)).rejects.toMatchObject({ code: 'forbidden', details: { condition: 'probation' }, message: expect.stringMatching(/on probation until .*report its health \(ReportHealth\) at least every 30 min/) });
    const fresh = withConditions({ rateLimitPerMinute: null, probation: { ...probation, lastReportAt: new Date(NOW - 60_000).toISOString() } });
    await expect(send(fresh, 2)).resolves.toBeDefined();
    now = NOW + 2 * 3_600_000;
    await expect(send(stale, 3)).resolves.toBeDefined();
  });
});
