import { randomBytes, randomUUID } from 'node:crypto';
import type { ErrorCode, Reply } from '@agora/contracts';
import { generateKeyPair } from '@agora/identity';
import {
  EVENT_HEADERS,
  decodeJson,
  encodeJson,
  type AgoraClient,
  type AgoraMessage,
  type EventPublisher,
  type InfoResponse,
  type PingResponse,
  type ServiceMicroservice,
  type ServiceMicroserviceOptions,
  type StatsResponse,
  type WireConnection,
} from '../src/index.js';
import { signed, uniqueService, widgetCatalog, widgetHandlers, widgetTeam } from '../src/testing.js';

/** What the shared suite needs from a transport: the same tests then run over NATS and in-process. */
export interface TransportHarness {
  start(options: Omit<ServiceMicroserviceOptions, 'transport' | 'natsUrl' | 'bus'>): Promise<ServiceMicroservice>;
  client: AgoraClient;
  /** Raw access, for bodies a well-behaved client would never send. */
  wire: WireConnection;
  events: EventPublisher;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Publishes with a reply inbox and collects every answer that comes within `waitMs` (scatter-gather). */
async function gather<T>(wire: WireConnection, subject: string, waitMs = 300): Promise<T[]> {
  const inbox = `_INBOX.${randomBytes(8).toString('hex')}`;
  const answers: T[] = [];
  const sub = wire.subscribe(inbox, { callback: (m) => answers.push(decodeJson(m.data) as T) });
  wire.publish(subject, new Uint8Array(), { reply: inbox });
  await sleep(waitMs);
  sub.unsubscribe();
  return answers;
}

async function rawRequest(wire: WireConnection, subject: string, data: Uint8Array): Promise<unknown> {
  return decodeJson((await wire.request(subject, data, { timeoutMs: 10_000 })).data);
}

function expectError(reply: Reply, code: ErrorCode): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
  if (reply.ok) throw new Error(`expected ${code}, got ok: ${JSON.stringify(reply.result)}`);
  expect(reply.error.code).toBe(code);
  return reply.error;
}

export function transportSuite(name: string, makeHarness: () => Promise<TransportHarness>): void {
  describe(`messaging over ${name}`, () => {
    const service = uniqueService('widgets');
    const widgets = widgetCatalog(service);
    const team = widgetTeam();
    const handlers = widgetHandlers(widgets);
    let h: TransportHarness;
    let single: ServiceMicroservice;
    const started: ServiceMicroservice[] = [];

    beforeAll(async () => {
      h = await makeHarness();
      single = await h.start({ service, catalog: widgets.catalog, directory: team.directory, commands: handlers.commands, queries: handlers.queries, logger: false });
      started.push(single);
    });

    afterAll(async () => {
      for (const s of started) await s.close();
      await h?.close();
    });

    const create = (payload: Record<string, unknown> = { widgetId: 'w1' }, actor = 'operator', key = team.operator, extra: { issuedAt?: Date; commandId?: string } = {}) =>
      signed('CreateWidget', actor, key, payload, extra);

    it('carries a signed command and its reply as plain JSON, with no Nest packet around either', async () => {
      const envelope = create({ widgetId: 'round-trip' });
      const raw = await rawRequest(h.wire, widgets.CreateWidget.subject, encodeJson(envelope));
      expect(raw).toEqual({ ok: true, result: { created: { widgetId: 'round-trip', size: 1 }, by: 'operator', replica: 'r0' } });
    });

    it('answers through AgoraClient', async () => {
      const reply = await h.client.request(widgets.CreateWidget.subject, create({ widgetId: 'client', size: 3 }));
      expect(reply).toEqual({ ok: true, result: { created: { widgetId: 'client', size: 3 }, by: 'operator', replica: 'r0' } });
    });

    it('answers queries, validating their parameters', async () => {
      expect(await h.client.request(widgets.GetWidget.subject, { widgetId: 'w9' })).toEqual({ ok: true, result: { widgetId: 'w9', params: { widgetId: 'w9' } } });
      const error = expectError(await h.client.request(widgets.GetWidget.subject, { widgetId: 'w9', extra: true }), 'invalid_command');
      expect(error.details?.['unknownFields']).toEqual(['extra']);
      // An empty body is `{}` for a query: here it lacks widgetId.
      const empty = (await rawRequest(h.wire, widgets.GetWidget.subject, new Uint8Array())) as Reply;
      expect(expectError(empty, 'invalid_command').details?.['issues']).toEqual([{ path: 'widgetId', message: expect.any(String) }]);
    });

    describe('the command gate', () => {
      const stale = new Date(Date.now() - 10 * 60_000);
      const cases: [string, () => unknown, ErrorCode][] = [
        ['an unsigned command', () => ({ ...create(), signature: undefined }), 'unsigned_command'],
        ['a forged signature', () => ({ ...create(), signature: randomBytes(64).toString('base64url') }), 'bad_signature'],
        ['a payload changed after signing', () => ({ ...create({ widgetId: 'w1' }), payload: { widgetId: 'w2' } }), 'bad_signature'],
        ["another agent's key", () => create({ widgetId: 'w1' }, 'operator', team.executive), 'bad_signature'],
        ['a stale command', () => create({ widgetId: 'w1' }, 'operator', team.operator, { issuedAt: stale }), 'stale_command'],
        ['an unknown actor', () => create({ widgetId: 'w1' }, 'stranger', generateKeyPair()), 'unknown_actor'],
        ['a disabled actor', () => create({ widgetId: 'w1' }, 'retired', team.retired), 'actor_disabled'],
        ['an actor without the role', () => create({ widgetId: 'w1' }, 'observer', team.observer), 'forbidden'],
        ['a bad payload', () => create({ widgetId: 'w1', size: 'huge' }), 'invalid_command'],
        ['an extra payload field', () => create({ widgetId: 'w1', color: 'red' }), 'invalid_command'],
        ['an extra envelope field', () => ({ ...create(), priority: 'high' }), 'invalid_command'],
        ['a type the subject does not take', () => signed('FailWidget', 'operator', team.operator, { how: 'domain' }), 'invalid_command'],
      ];
      it.each(cases)('refuses %s', async (_what, body, code) => {
        const before = handlers.calls.length;
        expectError(await h.client.request(widgets.CreateWidget.subject, body()), code);
        expect(handlers.calls.length).toBe(before);
      });

      it('names the offending fields', async () => {
        const payload = expectError(await h.client.request(widgets.CreateWidget.subject, create({ widgetId: 'w1', size: 'huge', color: 'red' })), 'invalid_command');
        expect(payload.details).toEqual({
          issues: expect.arrayContaining([expect.objectContaining({ path: 'payload.size' }), { path: 'payload.color', message: 'unknown field "color"' }]),
          unknownFields: ['payload.color'],
        });
        const envelope = expectError(await h.client.request(widgets.CreateWidget.subject, { ...create(), priority: 'high' }), 'invalid_command');
        expect(envelope.details?.['unknownFields']).toEqual(['priority']);
      });

      it('answers invalid_command to malformed JSON, a non-object or an empty body', async () => {
        for (const body of ['{"commandId":', '[1,2,3]', '"text"', 'null', '']) {
          const reply = (await rawRequest(h.wire, widgets.CreateWidget.subject, new TextEncoder().encode(body))) as Reply;
          expectError(reply, 'invalid_command');
        }
      });

      it('answers payload_too_large to a body over 256 KiB', async () => {
        const reply = await h.client.request(widgets.CreateWidget.subject, { ...create(), padding: 'x'.repeat(300 * 1024) });
        expect(expectError(reply, 'payload_too_large').details).toEqual({ size: expect.any(Number), limit: 256 * 1024 });
      });
    });

    it('passes a handler AgoraError through and hides any other error behind internal', async () => {
      const domain = expectError(await h.client.request(widgets.FailWidget.subject, signed('FailWidget', 'operator', team.operator, { how: 'domain' })), 'illegal_state');
      expect(domain).toEqual({ code: 'illegal_state', message: 'the widget is already broken', details: { widgetId: 'w1' } });
      const crash = expectError(await h.client.request(widgets.FailWidget.subject, signed('FailWidget', 'operator', team.operator, { how: 'crash' })), 'internal');
      expect(crash.message).not.toMatch(/secret|disk/);
    });

    it('answers a repeated envelope from its reply cache, but runs a different envelope that reuses the commandId', async () => {
      const first = create({ widgetId: 'dup' });
      const before = handlers.calls.length;
      const a = await h.client.request(widgets.CreateWidget.subject, first);
      const b = await h.client.request(widgets.CreateWidget.subject, first);
      expect(b).toEqual(a);
      expect(handlers.calls.length).toBe(before + 1);
      const reused = create({ widgetId: 'dup', size: 2 }, 'executive', team.executive, { commandId: first.commandId });
      const c = await h.client.request(widgets.CreateWidget.subject, reused);
      expect(c).toMatchObject({ ok: true, result: { created: { size: 2 }, by: 'executive' } });
      expect(handlers.calls.length).toBe(before + 2);
    });

    it('answers unavailable at once when nobody serves the subject', async () => {
      const startedAt = Date.now();
      const reply = await h.client.request(`agora.cmd.${uniqueService('nobody')}.thing.do`, { any: 1 }, { timeoutMs: 4_000 });
      expectError(reply, 'unavailable');
      expect(Date.now() - startedAt).toBeLessThan(1_000);
    });

    it('answers timeout when the service does not reply in time', async () => {
      const mute = `agora.cmd.${uniqueService('mute')}.thing.do`;
      const sub = h.wire.subscribe(mute, { callback: () => undefined });
      await h.wire.flush();
      const startedAt = Date.now();
      expectError(await h.client.request(mute, {}, { timeoutMs: 150 }), 'timeout');
      expect(Date.now() - startedAt).toBeLessThan(1_000);
      sub.unsubscribe();

      // A slow handler: the caller gets `timeout`; the service finishes on its own (wait for it, to close cleanly).
      const slow = await h.client.request(widgets.FailWidget.subject, signed('FailWidget', 'operator', team.operator, { how: 'slow' }), { timeoutMs: 200 });
      expectError(slow, 'timeout');
      await sleep(600);
    });

    it('relays events on agora.evt.<category>.<EventType> with their headers', async () => {
      const category = uniqueService('widget');
      const received: AgoraMessage[] = [];
      const sub = h.client.subscribe(`agora.evt.${category}.>`, (m) => received.push(m));
      await h.wire.flush();
      const event = {
        id: randomUUID(),
        type: 'WidgetCreated',
        data: { widgetId: 'w1' },
        metadata: { actor: 'operator' },
        streamId: `${category}-w1`,
        revision: 0,
        position: '42',
        recordedAt: new Date().toISOString(),
      };
      await h.events.publish(event);
      await sleep(100);
      sub.unsubscribe();
      expect(received).toHaveLength(1);
      expect(received[0]?.subject).toBe(`agora.evt.${category}.WidgetCreated`);
      expect(received[0]?.body).toEqual(event);
      expect(received[0]?.headers).toMatchObject({
        [EVENT_HEADERS.id]: event.id,
        [EVENT_HEADERS.stream]: event.streamId,
        [EVENT_HEADERS.revision]: '0',
        [EVENT_HEADERS.position]: '42',
      });
    });

    describe('three replicas of one service', () => {
      const shared = uniqueService('shared');
      const sharedWidgets = widgetCatalog(shared);
      const calls: { replica: string; commandId: string }[] = [];
      const replicas: ServiceMicroservice[] = [];
      const REQUESTS = 30;

      beforeAll(async () => {
        for (const replica of ['r1', 'r2', 'r3']) {
          const { commands, queries } = widgetHandlers(sharedWidgets, replica, calls);
          const s = await h.start({ service: shared, catalog: sharedWidgets.catalog, directory: team.directory, commands, queries, version: '1.0.0', logger: false });
          replicas.push(s);
          started.push(s);
        }
      });

      it('share the requests through their queue group: each is handled exactly once', async () => {
        const envelopes = Array.from({ length: REQUESTS }, (_, i) => signed('CreateWidget', 'operator', team.operator, { widgetId: `q${i}` }));
        const replies = await Promise.all(envelopes.map((e) => h.client.request(sharedWidgets.CreateWidget.subject, e)));
        expect(replies.every((r) => r.ok)).toBe(true);
        expect(calls).toHaveLength(REQUESTS);
        expect(new Set(calls.map((c) => c.commandId)).size).toBe(REQUESTS);
        expect(new Set(calls.map((c) => c.replica)).size).toBeGreaterThan(1);
      });

      it('answer $SRV.PING, $SRV.INFO and $SRV.STATS with the micro protocol shapes', async () => {
        const ids = replicas.map((r) => r.id).sort();
        const pings = await gather<PingResponse>(h.wire, `$SRV.PING.${shared}`);
        expect(pings.map((p) => p.id).sort()).toEqual(ids);
        for (const p of pings) expect(p).toEqual({ type: 'io.nats.micro.v1.ping_response', name: shared, id: p.id, version: '1.0.0', metadata: {} });
        const everyone = await gather<PingResponse>(h.wire, '$SRV.PING');
        expect(everyone.filter((p) => p.name === shared).map((p) => p.id).sort()).toEqual(ids);

        const replica = replicas[0] as ServiceMicroservice;
        const [info, ...more] = await gather<InfoResponse>(h.wire, `$SRV.INFO.${shared}.${replica.id}`);
        expect(more).toEqual([]);
        expect(info).toEqual({
          type: 'io.nats.micro.v1.info_response',
          name: shared,
          id: replica.id,
          version: '1.0.0',
          metadata: {},
          description: `Agora ${shared} service`,
          endpoints: [
            { name: 'CreateWidget', subject: sharedWidgets.CreateWidget.subject, queue_group: shared, metadata: { kind: 'command', summary: 'Create a widget' } },
            { name: 'FailWidget', subject: sharedWidgets.FailWidget.subject, queue_group: shared, metadata: expect.objectContaining({ kind: 'command' }) },
            { name: 'widgets_get', subject: sharedWidgets.GetWidget.subject, queue_group: shared, metadata: expect.objectContaining({ kind: 'query' }) },
            { name: 'widgets_list', subject: sharedWidgets.ListWidgets.subject, queue_group: shared, metadata: expect.objectContaining({ kind: 'query' }) },
          ],
        });

        const stats = await gather<StatsResponse>(h.wire, `$SRV.STATS.${shared}`);
        expect(stats).toHaveLength(3);
        let total = 0;
        for (const s of stats) {
          expect(s).toMatchObject({ type: 'io.nats.micro.v1.stats_response', name: shared, version: '1.0.0', started: expect.any(String) });
          const create = s.endpoints.find((e) => e.name === 'CreateWidget');
          expect(create).toEqual({
            name: 'CreateWidget',
            subject: sharedWidgets.CreateWidget.subject,
            queue_group: shared,
            // Each replica counts exactly the requests it handled.
            num_requests: calls.filter((c) => c.replica === `r${replicas.findIndex((r) => r.id === s.id) + 1}`).length,
            num_errors: 0,
            last_error: '',
            processing_time: expect.any(Number),
            average_processing_time: expect.any(Number),
          });
          total += create?.num_requests ?? 0;
        }
        expect(total).toBe(REQUESTS);
      });

      it('count refused requests as errors in $SRV.STATS', async () => {
        const replica = replicas[0] as ServiceMicroservice;
        const before = replica.dispatcher.serviceApi.stats().endpoints.find((e) => e.name === 'CreateWidget');
        // Refusals spread over the replicas; summed over all of them, each is counted once.
        await Promise.all(Array.from({ length: 6 }, () => h.client.request(sharedWidgets.CreateWidget.subject, signed('CreateWidget', 'observer', team.observer, { widgetId: 'x' }))));
        const stats = await gather<StatsResponse>(h.wire, `$SRV.STATS.${shared}`);
        const errors = stats.map((s) => s.endpoints.find((e) => e.name === 'CreateWidget')).reduce((n, e) => n + (e?.num_errors ?? 0), 0);
        expect(errors).toBe(6);
        const mine = stats.find((s) => s.id === replica.id)?.endpoints.find((e) => e.name === 'CreateWidget');
        if (mine && mine.num_errors > 0) expect(mine.last_error).toMatch(/^forbidden: /);
        expect(before?.num_errors).toBe(0);
      });
    });
  });
}
