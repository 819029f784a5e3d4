// The gateway's spans with tracing on (the SDK's in-memory exporter): an HTTP request continues the
// caller's traceparent, the command it forwards is served in the same trace (the trace context
// travels in the transport's headers), a query too, and an SSE subscription is one span that lasts
// as long as it. With tracing off, no header is added and nothing is recorded.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedEventStore, type EventStore } from '@agora/eventstore';
import { createServiceMicroservice, InProcessAgoraClient, InProcessBus, type ServiceMicroservice } from '@agora/messaging';
import { useTracerProvider } from '@agora/tracing';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { startGateway, type Gateway } from '../src/index.js';
import { signed, uniqueService, widgetCatalog, widgetHandlers, widgetTeam } from '@agora/messaging/testing';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

describe('the gateway traced', () => {
  const service = uniqueService('widgets');
  const widgets = widgetCatalog(service);
  const team = widgetTeam();
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let dir: string;
  let bus: InProcessBus;
  let svc: ServiceMicroservice;
  let store: EventStore;
  let gateway: Gateway;

  beforeAll(async () => {
    provider.register();
    useTracerProvider(provider);
    dir = mkdtempSync(join(tmpdir(), 'agora-gateway-tracing-'));
    bus = new InProcessBus();
    const handlers = widgetHandlers(widgets);
    svc = await createServiceMicroservice({ service, transport: 'in-process', bus, catalog: widgets.catalog, directory: team.directory, commands: handlers.commands, queries: handlers.queries, logger: false });
    store = await openEmbeddedEventStore({ directory: join(dir, 'events') });
    gateway = await startGateway({ client: new InProcessAgoraClient(bus), store, port: 0, host: '127.0.0.1', logger: false, catalog: widgets.catalog, sseHeartbeatMs: 50 });
  });

  afterAll(async () => {
    useTracerProvider(undefined);
    await provider.shutdown();
    await gateway?.close();
    await svc?.close();
    await store?.close();
    bus?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => exporter.reset());
  const spans = () => exporter.getFinishedSpans();
  const named = (name: string) => spans().find((s) => s.name === name);

  it("continues the caller's trace through the gateway into the service, with the command's type and outcome", async () => {
    const res = await fetch(`${gateway.url}/v1/commands`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
      body: JSON.stringify(signed('CreateWidget', 'operator', team.operator, { widgetId: 'w1', label: 'secret label' })),
    });
    expect(res.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const http = named('POST /v1/commands')!;
    const request = spans().find((s) => s.name.startsWith('agora.request '))!;
    const command = named('agora.command CreateWidget')!;
    const gate = named('agora.gate')!;
    expect(spans().every((s) => s.spanContext().traceId === TRACE_ID)).toBe(true);
    expect(http.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(http.attributes).toMatchObject({ 'http.route': '/v1/commands', 'http.response.status_code': 200, 'http.request.method': 'POST' });
    expect(request.parentSpanContext?.spanId).toBe(http.spanContext().spanId);
    expect(command.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(command.attributes).toMatchObject({ 'agora.service': service, 'agora.command.type': 'CreateWidget', 'agora.outcome': 'ok' });
    expect(gate.parentSpanContext?.spanId).toBe(command.spanContext().spanId);
    expect(gate.attributes).toMatchObject({ 'agora.actor': 'operator', 'agora.outcome': 'ok' });
    expect(JSON.stringify(spans().map((s) => s.attributes))).not.toContain('secret label');
  });

  it('a refused command carries its code; a query is a span of its own', async () => {
    const refused = await fetch(`${gateway.url}/v1/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signed('CreateWidget', 'observer', team.observer, { widgetId: 'w2' })) });
    expect(refused.status).toBe(403);
    await fetch(`${gateway.url}/v1/${service}/widgets/w1`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(named('agora.command CreateWidget')?.attributes).toMatchObject({ 'agora.outcome': 'forbidden', 'agora.error.code': 'forbidden' });
    expect(named('POST /v1/commands')?.attributes['http.response.status_code']).toBe(403);
    const query = named(`agora.query ${service}.widgets.get`)!;
    expect(query.attributes).toMatchObject({ 'agora.query.name': `${service}.widgets.get`, 'agora.outcome': 'ok' });
    expect(named(`GET /v1/${service}/widgets/:widgetId`)?.spanContext().traceId).toBe(query.spanContext().traceId);
  });

  it('an SSE subscription is one span, ended when the client leaves', async () => {
    const controller = new AbortController();
    const res = await fetch(`${gateway.url}/v1/events`, { signal: controller.signal });
    expect(res.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(named('GET /v1/events')).toBeUndefined();
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const sse = named('GET /v1/events')!;
    expect(sse.attributes).toMatchObject({ 'agora.sse': true, 'http.route': '/v1/events' });
    expect(Number(sse.duration[0]) * 1e3 + sse.duration[1] / 1e6).toBeGreaterThanOrEqual(190);
  });

  it('with tracing off, records nothing', async () => {
    useTracerProvider(undefined);
    try {
      await fetch(`${gateway.url}/v1/${service}/widgets/w1`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(spans()).toEqual([]);
    } finally {
      useTracerProvider(provider);
    }
  });
});
