import type { Reply } from '@agora/contracts';
import {
  AgoraReplySerializer,
  AgoraRequestDeserializer,
  InProcessBus,
  MessageDispatcher,
  NoResponders,
  PayloadTooLarge,
  ReplyCache,
  RequestTimedOut,
  ServiceApi,
  encodeJson,
  replyCacheKey,
  subjectMatches,
  type MessagingLogger,
  type WireDelivery,
} from '../src/index.js';
import { signed, widgetCatalog, widgetHandlers, widgetTeam } from '../src/testing.js';

const text = (data: Uint8Array) => new TextDecoder().decode(data);
const json = (value: unknown) => encodeJson(value);

function recordingLogger() {
  const errors: { message: string; error: unknown }[] = [];
  const logger: MessagingLogger = { error: (message, error) => errors.push({ message, error }), warn: () => undefined };
  return { logger, errors };
}

describe('AgoraRequestDeserializer', () => {
  const deserializer = new AgoraRequestDeserializer(100);
  const request = (data: Uint8Array, reply: string | null = '_INBOX.1') => deserializer.deserialize({ subject: 'agora.cmd.s.a.v', data, ...(reply ? { reply } : {}) });

  it('turns a JSON object into a Nest packet whose pattern is the subject, always with an id', () => {
    const packet = request(json({ a: 1 }));
    expect(packet).toEqual({ id: expect.any(String), pattern: 'agora.cmd.s.a.v', data: { subject: 'agora.cmd.s.a.v', body: { a: 1 } } });
    expect(request(json({})).id).not.toBe(packet.id);
  });

  it('rejects malformed JSON, non-objects and invalid UTF-8 as invalid_command', () => {
    for (const data of [new TextEncoder().encode('{"a":'), json([1]), json(null), json('x'), json(3), new Uint8Array([0x7b, 0xff, 0x7d])]) {
      expect(request(data).data.rejection?.code).toBe('invalid_command');
    }
  });

  it('rejects a body over the limit as payload_too_large', () => {
    expect(request(json({ a: 'x'.repeat(100) })).data.rejection).toMatchObject({ code: 'payload_too_large', details: { limit: 100 } });
  });

  it('passes an empty body as undefined (queries read it as {})', () => {
    expect(request(new Uint8Array()).data).toEqual({ subject: 'agora.cmd.s.a.v', body: undefined });
  });

  it('rejects a publish without a reply subject', () => {
    expect(request(json({}), null).data.rejection?.code).toBe('invalid_command');
  });
});

describe('AgoraReplySerializer', () => {
  it('writes the plain Reply, without the Nest packet around it', () => {
    const { logger } = recordingLogger();
    const out = new AgoraReplySerializer(logger).serialize({ id: '7', response: { ok: true, result: { x: 1 } }, isDisposed: true });
    expect(JSON.parse(text(out.data))).toEqual({ ok: true, result: { x: 1 } });
  });

  it('answers internal for a Nest-level error or a result JSON cannot carry, and logs it', () => {
    const { logger, errors } = recordingLogger();
    const serializer = new AgoraReplySerializer(logger);
    expect(JSON.parse(text(serializer.serialize({ id: '1', err: 'There is no matching message handler' }).data)).error.code).toBe('internal');
    expect(JSON.parse(text(serializer.serialize({ id: '2', response: { ok: true, result: 10n } }).data)).error.code).toBe('internal');
    expect(errors).toHaveLength(2);
  });
});

describe('ReplyCache', () => {
  const ok = (n: number): Reply => ({ ok: true, result: n });

  it('answers a repeated key from the cache and evicts the least recently used', async () => {
    const cache = new ReplyCache(2);
    let runs = 0;
    const run = async () => ok(++runs);
    await cache.getOrRun('a', run);
    await cache.getOrRun('b', run);
    expect(await cache.getOrRun('a', run)).toEqual(ok(1));
    await cache.getOrRun('c', run);
    expect(await cache.getOrRun('a', run)).toEqual(ok(1));
    expect(await cache.getOrRun('b', run)).toEqual(ok(4));
    expect(cache.size).toBe(2);
  });

  it('lets a concurrent copy wait for the first run', async () => {
    const cache = new ReplyCache(10);
    let runs = 0;
    const run = () => new Promise<Reply>((resolve) => setTimeout(() => resolve(ok(++runs)), 20));
    const [a, b] = await Promise.all([cache.getOrRun('k', run), cache.getOrRun('k', run)]);
    expect([a, b, runs]).toEqual([ok(1), ok(1), 1]);
  });

  it('does not keep error replies', async () => {
    const cache = new ReplyCache(10);
    let runs = 0;
    const run = async (): Promise<Reply> => ({ ok: false, error: { code: 'unavailable', message: String(++runs) } });
    await cache.getOrRun('k', run);
    await cache.getOrRun('k', run);
    expect(runs).toBe(2);
  });

  it('keys on the whole envelope, not only the commandId', () => {
    const team = widgetTeam();
    const first = signed('CreateWidget', 'operator', team.operator, { widgetId: 'w1' });
    const reused = signed('CreateWidget', 'executive', team.executive, { widgetId: 'w1' }, { commandId: first.commandId, issuedAt: first.issuedAt });
    expect(replyCacheKey(first)).toBe(replyCacheKey({ ...first }));
    expect(replyCacheKey(first)).not.toBe(replyCacheKey(reused));
    expect(replyCacheKey(first).startsWith(`${first.commandId}:`)).toBe(true);
  });
});

describe('InProcessBus', () => {
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Waits until `done()` holds (deliveries are asynchronous; a loaded machine may take a while), at most 5 s. */
  const until = async (done: () => boolean) => {
    for (const deadline = Date.now() + 5_000; !done() && Date.now() < deadline; ) await wait(5);
  };

  it('matches NATS wildcards', () => {
    const m = (p: string, s: string) => subjectMatches(p.split('.'), s.split('.'));
    expect(m('a.*.c', 'a.b.c')).toBe(true);
    expect(m('a.*', 'a.b.c')).toBe(false);
    expect(m('a.>', 'a.b.c')).toBe(true);
    expect(m('a.>', 'a')).toBe(false);
    expect(m('a.b', 'a.b')).toBe(true);
    expect(m('a.b', 'a.b.c')).toBe(false);
  });

  it('delivers to every plain subscriber and to one member per queue group, asynchronously', async () => {
    const bus = new InProcessBus();
    const got: string[] = [];
    bus.subscribe('x.>', { callback: () => got.push('plain') });
    bus.subscribe('x.y', { queue: 'q', callback: () => got.push('q1') });
    bus.subscribe('x.y', { queue: 'q', callback: () => got.push('q2') });
    bus.publish('x.y', json(1));
    bus.publish('x.y', json(2));
    expect(got).toEqual([]);
    await until(() => got.length >= 4);
    expect(got.filter((g) => g === 'plain')).toHaveLength(2);
    expect(got.filter((g) => g.startsWith('q')).sort()).toEqual(['q1', 'q2']);
  });

  it('copies bodies: the receiver cannot touch the sender\'s buffer', async () => {
    const bus = new InProcessBus();
    let received: Uint8Array | undefined;
    bus.subscribe('x', { callback: (m) => (received = m.data) });
    const data = json({ a: 1 });
    bus.publish('x', data);
    data[0] = 0;
    await until(() => received !== undefined);
    expect(text(received as Uint8Array)).toBe('{"a":1}');
  });

  it('answers requests, reports no responders at once, and times out', async () => {
    const bus = new InProcessBus();
    bus.subscribe('echo', { callback: (m: WireDelivery) => m.respond(m.data) });
    bus.subscribe('mute', { callback: () => undefined });
    expect(text((await bus.request('echo', json('hi'), { timeoutMs: 100 })).data)).toBe('"hi"');
    await expect(bus.request('nobody', json(1), { timeoutMs: 1_000 })).rejects.toBeInstanceOf(NoResponders);
    const started = Date.now();
    await expect(bus.request('mute', json(1), { timeoutMs: 50 })).rejects.toBeInstanceOf(RequestTimedOut);
    expect(Date.now() - started).toBeLessThan(500);
    expect(bus.subscriptionCount).toBe(2);
  });

  it('refuses a message over its payload limit, like a NATS server', () => {
    const bus = new InProcessBus({ maxPayload: 10 });
    bus.subscribe('x', { callback: () => undefined });
    expect(() => bus.publish('x', json('x'.repeat(20)))).toThrow(PayloadTooLarge);
  });
});

describe('MessageDispatcher', () => {
  const service = 'widgets';
  const widgets = widgetCatalog(service);
  const team = widgetTeam();

  it('refuses to start without a handler for every command and query, or with extra ones', () => {
    const { commands, queries } = widgetHandlers(widgets);
    const base = { service, directory: team.directory, catalog: widgets.catalog };
    expect(() => new MessageDispatcher({ ...base, commands: new Map([...commands].slice(1)), queries })).toThrow(/no handler for the commands CreateWidget/);
    expect(() => new MessageDispatcher({ ...base, commands: new Map([...commands, ['Other', async () => 1]]), queries })).toThrow(/Other/);
    expect(() => new MessageDispatcher({ ...base, commands, queries: new Map() })).toThrow(/widgets\.get/);
  });

  it('logs an unexpected handler error and answers a generic internal', async () => {
    const { logger, errors } = recordingLogger();
    const { commands, queries } = widgetHandlers(widgets);
    const dispatcher = new MessageDispatcher({ service, directory: team.directory, catalog: widgets.catalog, commands, queries, logger });
    const reply = await dispatcher.dispatch({ subject: widgets.FailWidget.subject, body: { ...signed('FailWidget', 'operator', team.operator, { how: 'crash' }) } });
    expect(reply).toEqual({ ok: false, error: { code: 'internal', message: expect.not.stringContaining('secret') } });
    expect(errors).toHaveLength(1);
    expect(String(errors[0]?.error)).toMatch(/disk on fire/);
  });

  it('takes the catalog of the service by default', () => {
    const registry = new MessageDispatcher({
      service: 'registry',
      directory: team.directory,
      commands: new Map(['RegisterAgent', 'UpdateAgent', 'RotateAgentKey', 'DisableAgent', 'EnableAgent', 'ReportHealth', 'SetModelBudget', 'ReserveModelCall', 'RecordModelCallOutcome'].map((t) => [t, async () => null])),
      queries: new Map(['agora.qry.registry.agents.list', 'agora.qry.registry.agents.get', 'agora.qry.registry.keys.configured', 'agora.qry.registry.model_calls.ledger', 'agora.qry.registry.model_calls.get'].map((s) => [s, async () => null])),
    });
    expect(registry.subjects()).toContain('agora.cmd.registry.agent.register');
    expect(registry.serviceApi.info().endpoints.map((e) => e.name)).toEqual(['AdjustTrust', 'DisableAgent', 'EnableAgent', 'RegisterAgent', 'RotateAgentKey', 'UpdateAgent', 'ReportHealth', 'ResumeAgent', 'RecordSettings', 'RecordModelCallOutcome', 'ReserveModelCall', 'SetModelBudget', 'agents_get', 'keys_configured', 'agents_list', 'model_calls_get', 'model_calls_ledger']);
  });
});

describe('ServiceApi', () => {
  it('counts requests, errors and processing time in nanoseconds', () => {
    const api = new ServiceApi({ name: 'widgets', version: '1.2.3', description: 'd', endpoints: [{ name: 'A', subject: 'a', queueGroup: 'widgets' }] });
    api.record('a', 1_000n);
    api.record('a', 3_000n, 'forbidden: no');
    api.record('elsewhere', 5n);
    expect(api.stats().endpoints).toEqual([
      { name: 'A', subject: 'a', queue_group: 'widgets', num_requests: 2, num_errors: 1, last_error: 'forbidden: no', processing_time: 4_000, average_processing_time: 2_000 },
    ]);
    expect(api.ping()).toEqual({ type: 'io.nats.micro.v1.ping_response', name: 'widgets', id: api.id, version: '1.2.3', metadata: {} });
  });

  it('refuses names and versions the micro protocol does not allow', () => {
    expect(() => new ServiceApi({ name: 'a.b', version: '1.0.0', description: '', endpoints: [] })).toThrow();
    expect(() => new ServiceApi({ name: 'a', version: '1.0', description: '', endpoints: [] })).toThrow();
  });
});

