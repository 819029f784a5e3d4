import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineCommand, ERROR_CODES, type ErrorCode, type Reply } from '@agora/contracts';
import { generateKeyPair } from '@agora/identity';
import { openEmbeddedEventStore, type EventStore } from '@agora/eventstore';
import { createServiceMicroservice, InProcessAgoraClient, InProcessBus, type ServiceMicroservice } from '@agora/messaging';
import { Counter, Registry } from 'prom-client';
import { z } from 'zod';
import { startGateway, type Gateway } from '../src/index.js';
import { signed, uniqueService, widgetCatalog, widgetHandlers, widgetTeam } from '@agora/messaging/testing';
import { sleep, SseReader } from './fixtures.js';

interface HttpAnswer {
  status: number;
  contentType: string | null;
  authenticate: string | null;
  body: Reply & Record<string, unknown>;
}

describe('the HTTP gateway', () => {
  const service = uniqueService('widgets');
  const widgets = widgetCatalog(service);
  const team = widgetTeam();
  // A command of a service nobody runs: the gateway knows it, no service answers it.
  const Orphan = defineCommand({ type: 'PokeOrphan', service: uniqueService('orphan'), aggregate: 'thing', verb: 'poke', roles: ['operator'], summary: 'Nobody serves this', payload: z.object({}).strict() });
  const catalog = { commands: [...widgets.catalog.commands, Orphan], queries: widgets.catalog.queries };
  let dir: string;
  let bus: InProcessBus;
  let svc: ServiceMicroservice;
  let store: EventStore;
  let gateway: Gateway;
  const extra: Gateway[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-gateway-'));
    bus = new InProcessBus();
    const handlers = widgetHandlers(widgets);
    svc = await createServiceMicroservice({ service, transport: 'in-process', bus, catalog: widgets.catalog, directory: team.directory, commands: handlers.commands, queries: handlers.queries, logger: false });
    store = await openEmbeddedEventStore({ directory: join(dir, 'events') });
    gateway = await startGateway({ client: new InProcessAgoraClient(bus), store, port: 0, host: '127.0.0.1', logger: false, catalog });
  });

  afterAll(async () => {
    for (const g of extra) await g.close();
    await gateway?.close();
    await svc?.close();
    await store?.close();
    bus?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function http(path: string, init: RequestInit = {}, on: Gateway = gateway): Promise<HttpAnswer> {
    const res = await fetch(`${on.url}${path}`, init);
    const text = await res.text();
    let body: HttpAnswer['body'];
    try {
      body = JSON.parse(text) as HttpAnswer['body'];
    } catch {
      throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} answered with non-JSON: ${text.slice(0, 200)}`);
    }
    return { status: res.status, contentType: res.headers.get('content-type'), authenticate: res.headers.get('www-authenticate'), body };
  }

  const post = (body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }, on: Gateway = gateway) =>
    http('/v1/commands', { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) }, on);

  function expectError(answer: HttpAnswer, status: number, code: ErrorCode): { code: string; message: string; details?: Record<string, unknown> } {
    expect({ status: answer.status, ok: answer.body.ok }).toEqual({ status, ok: false });
    if (answer.body.ok) throw new Error('unreachable');
    expect(answer.body.error.code).toBe(code);
    expect(answer.contentType).toMatch(/^application\/json/);
    // RFC 9110: every 401 says how to authenticate, and nothing else carries a challenge.
    if (status === 401) expect(answer.authenticate).toMatch(/^Bearer realm="agora", scope="read", error="invalid_(request|token)", error_description="/);
    else expect(answer.authenticate).toBeNull();
    return answer.body.error;
  }

  describe('POST /v1/commands', () => {
    it('forwards a signed command to its service and answers its reply with 200', async () => {
      const answer = await post(signed('CreateWidget', 'operator', team.operator, { widgetId: 'http-1', size: 3 }));
      expect(answer.status).toBe(200);
      expect(answer.contentType).toMatch(/^application\/json/);
      expect(answer.body).toEqual({ ok: true, result: { created: { widgetId: 'http-1', size: 3 }, by: 'operator', replica: 'r0' } });
    });

    it.each(Object.keys(ERROR_CODES) as ErrorCode[])('answers a %s reply with its HTTP status', async (code) => {
      const answer = await post(signed('FailWidget', 'operator', team.operator, { how: 'refuse', code }));
      const error = expectError(answer, ERROR_CODES[code].status, code);
      expect(error).toEqual({ code, message: `refused with ${code}`, details: { asked: code } });
    });

    const stale = () => new Date(Date.now() - 10 * 60_000);
    const gateCases: [string, () => unknown, number, ErrorCode][] = [
      ['an unsigned command', () => ({ ...signed('CreateWidget', 'operator', team.operator, { widgetId: 'w' }), signature: undefined }), 401, 'unsigned_command'],
      ['a forged signature', () => ({ ...signed('CreateWidget', 'operator', team.operator, { widgetId: 'w' }), signature: randomBytes(64).toString('base64url') }), 401, 'bad_signature'],
      ['a stale command', () => signed('CreateWidget', 'operator', team.operator, { widgetId: 'w' }, { issuedAt: stale() }), 401, 'stale_command'],
      ['an unknown actor', () => signed('CreateWidget', 'stranger', generateKeyPair(), { widgetId: 'w' }), 401, 'unknown_actor'],
      ['a disabled actor', () => signed('CreateWidget', 'retired', team.retired, { widgetId: 'w' }), 403, 'actor_disabled'],
      ['an actor without the role', () => signed('CreateWidget', 'observer', team.observer, { widgetId: 'w' }), 403, 'forbidden'],
      ['a bad payload', () => signed('CreateWidget', 'operator', team.operator, { widgetId: 'w', size: 'huge' }), 400, 'invalid_command'],
    ];
    it.each(gateCases)("passes the service's verdict on %s through", async (_what, body, status, code) => {
      expectError(await post(body()), status, code);
    });

    it('hides a crash behind internal (500)', async () => {
      const error = expectError(await post(signed('FailWidget', 'operator', team.operator, { how: 'crash' })), 500, 'internal');
      expect(error.message).not.toMatch(/secret|disk/);
    });

    it('answers 503 unavailable when no service serves the command', async () => {
      const error = expectError(await post(signed('PokeOrphan', 'operator', team.operator, {})), 503, 'unavailable');
      expect(error.message).toContain(Orphan.subject);
    });

    it('answers 504 timeout when the service replies after requestTimeoutMs', async () => {
      const impatient = await startGateway({ client: new InProcessAgoraClient(bus), store, port: 0, host: '127.0.0.1', logger: false, catalog, requestTimeoutMs: 100 });
      extra.push(impatient);
      expectError(await post(signed('FailWidget', 'operator', team.operator, { how: 'slow' }), undefined, impatient), 504, 'timeout');
      await sleep(500); // let the slow handler finish before the service closes
    });

    it('refuses malformed JSON with a clear message', async () => {
      const error = expectError(await post('{"commandId":'), 400, 'invalid_command');
      expect(error.message).toMatch(/not valid JSON/);
    });

    it.each([['[1,2]', 'an array'], ['"text"', 'a string'], ['null', 'null'], ['42', 'a number']])('refuses the JSON %s: not an object', async (body, kind) => {
      const error = expectError(await post(body), 400, 'invalid_command');
      expect(error.message).toContain(`the body is ${kind}`);
    });

    it('refuses an empty body', async () => {
      expect(expectError(await post(''), 400, 'invalid_command').message).toMatch(/empty/);
    });

    it('refuses a body over maxBodyBytes with 413', async () => {
      const envelope = { ...signed('CreateWidget', 'operator', team.operator, { widgetId: 'big' }), padding: 'x'.repeat(300 * 1024) };
      const error = expectError(await post(envelope), 413, 'payload_too_large');
      expect(error.details).toEqual({ size: expect.any(Number), limit: 256 * 1024 });
      // The connection is still good for the next request.
      expect((await post(signed('CreateWidget', 'operator', team.operator, { widgetId: 'after-big' }))).status).toBe(200);
    });

    it('refuses an unknown command type, naming the known ones', async () => {
      const error = expectError(await post(signed('LaunchRocket', 'operator', team.operator, {})), 400, 'invalid_command');
      expect(error.message).toMatch(/unknown command type "LaunchRocket"/);
      expect(error.details).toEqual({ knownTypes: ['CreateWidget', 'FailWidget', 'PokeOrphan'] });
      expect(expectError(await post({ payload: {} }), 400, 'invalid_command').message).toMatch(/no "type"/);
    });

    it('refuses a body that is not sent as JSON with 415', async () => {
      const body = JSON.stringify(signed('CreateWidget', 'operator', team.operator, { widgetId: 'form' }));
      const error = expectError(await post(body, { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'invalid_command');
      expect(error.message).toMatch(/application\/json/);
      expectError(await post(body, { 'content-type': 'text/plain' }), 415, 'invalid_command');
      expect((await post(body, { 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
    });
  });

  describe('query routes', () => {
    it('serves GET /v1/<service>/<httpPath> with path and query-string parameters', async () => {
      const answer = await http(`/v1/${service}/widgets/w-7?verbose=yes&tag=a&tag=b`);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ ok: true, result: { widgetId: 'w-7', params: { widgetId: 'w-7', verbose: 'yes', tag: ['a', 'b'] } } });
      expect((await http(`/v1/${service}/widgets`)).body).toEqual({ ok: true, result: { widgets: ['w1', 'w2'] } });
    });

    it('turns query-string text into the numbers, booleans and arrays the params schema wants', async () => {
      const answer = await http(`/v1/${service}/widgets/w-8?count=3&deep=false&tag=only`);
      expect(answer.body).toEqual({ ok: true, result: { widgetId: 'w-8', params: { widgetId: 'w-8', count: 3, deep: false, tag: ['only'] } } });
      // Text that does not fit is passed on for the service to refuse, naming the field.
      const error = expectError(await http(`/v1/${service}/widgets/w-8?count=3.5`), 400, 'invalid_command');
      expect(error.details?.['issues']).toEqual([expect.objectContaining({ path: 'count' })]);
    });

    it('passes limit and cursor through to a list query, and answers 400 for a limit over the maximum', async () => {
      const first = await http(`/v1/${service}/widgets?limit=1`);
      expect(first.body).toEqual({ ok: true, result: { widgets: ['w1'], nextCursor: 'i1' } });
      expect((await http(`/v1/${service}/widgets?limit=1&cursor=i1`)).body).toEqual({ ok: true, result: { widgets: ['w2'] } });
      const error = expectError(await http(`/v1/${service}/widgets?limit=1001`), 400, 'invalid_command');
      expect(error.message).toBe('invalid widgets.list parameters: limit: limit is at most 1000 items a page; follow nextCursor for the rest');
      expectError(await http(`/v1/${service}/widgets?cursor=${encodeURIComponent('not a cursor')}`), 400, 'invalid_command');
    });

    it('lets the service validate the parameters (400 with the offending field)', async () => {
      const error = expectError(await http(`/v1/${service}/widgets/w-7?color=red`), 400, 'invalid_command');
      expect(error.details?.['unknownFields']).toEqual(['color']);
      expectError(await http(`/v1/${service}/widgets/${encodeURIComponent('not an id')}`), 400, 'invalid_command');
    });

    it('answers 404 not_found, as JSON, for a route that does not exist', async () => {
      for (const [method, path] of [
        ['GET', '/nope'],
        ['GET', `/v1/${service}/widgets/a/b`],
        ['GET', '/v1/commands'],
        ['POST', '/v1/events'],
        ['DELETE', `/v1/${service}/widgets/w1`],
      ] as const) {
        const error = expectError(await http(path, { method }), 404, 'not_found');
        expect(error.message).toBe(`no route ${method} ${path}`);
      }
    });
  });

  describe('operations', () => {
    it('GET /health names the store', async () => {
      const answer = await http('/health');
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ status: 'ok', store: 'embedded', reads: { mode: 'open', audience: 'agora' } });
    });

    it('GET /metrics counts requests by route pattern, method and status, never by id', async () => {
      await http(`/v1/${service}/widgets/metric-id-123`);
      await http('/definitely/not/here');
      expect((await fetch(`${gateway.url}/mcp`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' })).status).toBe(415);
      const res = await fetch(`${gateway.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = await res.text();
      expect(text).toMatch(/agora_gateway_http_requests_total\{route="\/v1\/commands",method="POST",status="200"\} [1-9]/);
      expect(text).toContain(`agora_gateway_http_requests_total{route="/v1/${service}/widgets/:widgetId",method="GET",status="200"}`);
      expect(text).toMatch(/agora_gateway_http_requests_total\{route="unmatched",method="GET",status="404"\}/);
      expect(text).toMatch(/agora_gateway_http_requests_total\{route="\/mcp",method="POST",status="415"\} 1/);
      expect(text).toMatch(/agora_gateway_http_request_duration_seconds_bucket\{le="[0-9.]+",route="\/v1\/commands",method="POST"\}/);
      expect(text).toContain('process_cpu_user_seconds_total');
      expect(text).not.toContain('metric-id-123');
      expect(text).not.toContain('/definitely');
      // Each gateway has a registry of its own.
      expect(await gateway.registry.metrics()).toContain('agora_gateway_http_requests_total');
    });

    it("given its process's registry, GET /metrics serves that one with the gateway's metrics added, taken out again on close", async () => {
      const processRegistry = new Registry();
      new Counter({ name: 'agora_process_marker_total', help: 'A metric of the process', registers: [processRegistry] });
      const shared = await startGateway({ client: new InProcessAgoraClient(bus), store, port: 0, host: '127.0.0.1', logger: false, catalog, registry: processRegistry });
      try {
        await fetch(`${shared.url}/health`);
        const text = await (await fetch(`${shared.url}/metrics`)).text();
        expect(text).toContain('agora_process_marker_total 0');
        expect(text).toMatch(/agora_gateway_http_requests_total\{route="[^"]+",method="GET",status="200"\} 1/);
        // the default process metrics are the process's to register, once
        expect(text).not.toContain('process_cpu_user_seconds_total');
        expect(shared.registry).toBe(processRegistry);
      } finally {
        await shared.close();
      }
      const after = await processRegistry.metrics();
      expect(after).toContain('agora_process_marker_total');
      expect(after).not.toContain('agora_gateway_http');
    });

    it('GET /docs is an OpenAPI 3.1 document naming every command type and query route', async () => {
      const answer = await http('/docs');
      expect(answer.status).toBe(200);
      const doc = answer.body as unknown as {
        openapi: string;
        paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { oneOf: { $ref: string }[] } }> } }>>;
        components: { schemas: Record<string, { properties?: { type?: { const?: string } } }> };
      };
      expect(doc.openapi).toBe('3.1.0');
      expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/commands', '/v1/events', `/v1/${service}/widgets/{widgetId}`, `/v1/${service}/widgets`, '/health', '/metrics']));
      const refs = doc.paths['/v1/commands']!['post']!.requestBody!.content['application/json']!.schema.oneOf.map((r) => r.$ref);
      expect(refs).toEqual(['#/components/schemas/CreateWidgetCommand', '#/components/schemas/FailWidgetCommand', '#/components/schemas/PokeOrphanCommand']);
      for (const type of ['CreateWidget', 'FailWidget', 'PokeOrphan']) expect(doc.components.schemas[`${type}Command`]?.properties?.type?.const).toBe(type);
      expect((await http('/docs/openapi.json')).body).toEqual(answer.body);
    });

    it('keeps Express out of sight: no x-powered-by, no HTML error page', async () => {
      const res = await fetch(`${gateway.url}/v1/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
      expect(res.headers.get('x-powered-by')).toBeNull();
      expect(await res.text()).not.toMatch(/<html|<pre/i);
    });
  });

  describe('GET /v1/events', () => {
    const readers: SseReader[] = [];
    const open = async (path: string, headers: Record<string, string> = {}, on: Gateway = gateway) => {
      const reader = await SseReader.open(`${on.url}${path}`, headers);
      readers.push(reader);
      return reader;
    };
    afterEach(() => {
      for (const r of readers.splice(0)) r.close();
    });

    /** Appends `count` events of one type to `<category>-<id>`, one commit each. */
    async function appendEvents(streamId: string, type: string, count: number): Promise<void> {
      for (let i = 0; i < count; i++) await store.append(streamId, [{ id: randomUUID(), type, data: { n: i }, metadata: { actor: 'test' } }], 'any');
    }
    const parsed = (data: string) => JSON.parse(data) as { id: string; type: string; streamId: string; revision: number; position: string; recordedAt: string; data: { n: number }; metadata: Record<string, unknown> };

    it('sends history, then live events, in order, as id/event/data messages', async () => {
      const category = uniqueService('sse');
      await appendEvents(`${category}-a`, 'ThingHappened', 2);
      const reader = await open(`/v1/events?category=${category}`);
      expect(reader.status).toBe(200);
      expect(reader.contentType).toMatch(/^text\/event-stream/);
      await reader.waitFor(2);
      await appendEvents(`${category}-b`, 'OtherHappened', 1);
      await appendEvents(`${category}-a`, 'ThingHappened', 1);
      const messages = await reader.waitFor(4);
      const events = messages.map((m) => parsed(m.data));
      expect(events.map((e) => [e.streamId, e.revision, e.type])).toEqual([
        [`${category}-a`, 0, 'ThingHappened'],
        [`${category}-a`, 1, 'ThingHappened'],
        [`${category}-b`, 0, 'OtherHappened'],
        [`${category}-a`, 2, 'ThingHappened'],
      ]);
      for (const [i, m] of messages.entries()) {
        expect(m.id).toBe(events[i]!.position);
        expect(m.event).toBe(events[i]!.type);
        expect(Object.keys(events[i]!).sort()).toEqual(['data', 'id', 'metadata', 'position', 'recordedAt', 'revision', 'streamId', 'type']);
      }
      // Positions are in the store's one global order.
      const all: string[] = [];
      for await (const e of store.readAll()) if (e.streamId.startsWith(category)) all.push(e.position);
      expect(messages.map((m) => m.id)).toEqual(all);
    });

    it('resumes after Last-Event-ID without a gap or a repeat', async () => {
      const category = uniqueService('resume');
      await appendEvents(`${category}-x`, 'Counted', 5);
      const first = await open(`/v1/events?category=${category}`);
      const firstTwo = await first.waitFor(2);
      first.close();
      const lastId = firstTwo[1]!.id!;
      // EventSource sends the header with the original URL: the header wins over ?after.
      const resumed = await open(`/v1/events?category=${category}&after=${encodeURIComponent(firstTwo[0]!.id!)}`, { 'last-event-id': lastId });
      await appendEvents(`${category}-x`, 'Counted', 1);
      const rest = await resumed.waitFor(4);
      expect(rest.map((m) => parsed(m.data).data.n)).toEqual([2, 3, 4, 0]);
      expect(rest.map((m) => parsed(m.data).revision)).toEqual([2, 3, 4, 5]);
      await sleep(100);
      expect(resumed.messages).toHaveLength(4);

      const viaQuery = await open(`/v1/events?category=${category}&after=${encodeURIComponent(rest[1]!.id!)}`);
      expect((await viaQuery.waitFor(2)).map((m) => parsed(m.data).revision)).toEqual([4, 5]);
    });

    it('filters by category and by type, each repeatable', async () => {
      const a = uniqueService('cata');
      const b = uniqueService('catb');
      const c = uniqueService('catc');
      await appendEvents(`${a}-1`, 'Red', 1);
      await appendEvents(`${b}-1`, 'Green', 1);
      await appendEvents(`${c}-1`, 'Red', 1);
      await appendEvents(`${a}-1`, 'Blue', 1);
      const twoCategories = await open(`/v1/events?category=${a}&category=${b}`);
      expect((await twoCategories.waitFor(3)).map((m) => m.event)).toEqual(['Red', 'Green', 'Blue']);
      const typed = await open(`/v1/events?category=${a}&category=${c}&type=Red`);
      expect((await typed.waitFor(2)).map((m) => parsed(m.data).streamId)).toEqual([`${a}-1`, `${c}-1`]);
      const types = await open(`/v1/events?category=${a}&type=Red&type=Blue`);
      expect((await types.waitFor(2)).map((m) => m.event)).toEqual(['Red', 'Blue']);
      await sleep(100);
      expect([twoCategories.messages.length, typed.messages.length, types.messages.length]).toEqual([3, 2, 2]);
    });

    it('from=end skips history', async () => {
      const category = uniqueService('tail');
      await appendEvents(`${category}-1`, 'Old', 3);
      const reader = await open(`/v1/events?from=end&category=${category}`);
      await appendEvents(`${category}-1`, 'New', 2);
      expect((await reader.waitFor(2)).map((m) => m.event)).toEqual(['New', 'New']);
      await sleep(100);
      expect(reader.messages).toHaveLength(2);
    });

    it('refuses a position the store does not know with 400, as JSON', async () => {
      const reader = await open('/v1/events', { 'last-event-id': 'not-a-position' });
      expect(reader.status).toBe(400);
      await reader.until(() => reader.text.includes('}'));
      expect(JSON.parse(reader.text)).toMatchObject({ ok: false, error: { code: 'invalid_command' } });
      const badFrom = await open('/v1/events?from=middle');
      expect(badFrom.status).toBe(400);
    });

    it('sends a heartbeat comment while idle, and lets a disconnected client go', async () => {
      const chatty = await startGateway({ client: new InProcessAgoraClient(bus), store, port: 0, host: '127.0.0.1', logger: false, catalog, sseHeartbeatMs: 50 });
      extra.push(chatty);
      const reader = await open(`/v1/events?category=${uniqueService('quiet')}`, {}, chatty);
      await reader.until(() => reader.comments >= 2);
      reader.close();
      // The stream is counted once its connection has ended.
      await sleep(100);
      expect(await chatty.registry.metrics()).toMatch(/agora_gateway_http_requests_total\{route="\/v1\/events",method="GET",status="200"\} 1/);
      // close() does not wait for open streams.
      const open2 = await open(`/v1/events?category=${uniqueService('quiet')}`, {}, chatty);
      expect(open2.status).toBe(200);
      const started = Date.now();
      await chatty.close();
      expect(Date.now() - started).toBeLessThan(2_000);
    });
  });
});
