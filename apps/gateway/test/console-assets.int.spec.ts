import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedEventStore, type EventStore } from '@agora/eventstore';
import { InProcessAgoraClient, InProcessBus } from '@agora/messaging';
import { startGateway, type Gateway } from '../src/index.js';

/** The gateway serving a console build (a directory laid out as apps/console/dist/public is). */
describe('the web console served by the gateway', () => {
  let dir: string;
  let store: EventStore;
  let bus: InProcessBus;
  let gateway: Gateway;
  let bare: Gateway;
  const INDEX = '<!doctype html><title>console</title><script type="module" src="/app-ABCD2345.js"></script>';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-console-'));
    const site = join(dir, 'public');
    mkdirSync(site);
    writeFileSync(join(site, 'index.html'), INDEX);
    writeFileSync(join(site, 'app-ABCD2345.js'), 'console.log("app")');
    writeFileSync(join(site, 'app-WXYZ6789.css'), 'body{}');
    writeFileSync(join(site, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    writeFileSync(join(dir, 'secret.txt'), 'outside the console');
    store = await openEmbeddedEventStore({ directory: join(dir, 'events') });
    bus = new InProcessBus();
    const client = new InProcessAgoraClient(bus);
    gateway = await startGateway({ client, store, port: 0, host: '127.0.0.1', logger: false, console: site });
    bare = await startGateway({ client, store, port: 0, host: '127.0.0.1', logger: false, console: join(dir, 'not-built') });
  });

  afterAll(async () => {
    await gateway?.close();
    await bare?.close();
    await store?.close();
    bus?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (path: string, headers: Record<string, string> = {}, base = gateway.url) => fetch(`${base}${path}`, { headers });
  const page = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

  it('serves index.html at / and for page paths a browser asks for, revalidated, with a content security policy', async () => {
    for (const path of ['/', '/fleet', '/dialectic/dialectic_session-a-p1', '/tribunal?proposal=p1']) {
      const res = await get(path, page);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(await res.text()).toBe(INDEX);
    }
  });

  it('serves hashed assets as immutable with their content types, and other files revalidated', async () => {
    const js = await get('/app-ABCD2345.js');
    expect([js.status, js.headers.get('content-type'), js.headers.get('cache-control')]).toEqual([200, 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable']);
    expect(await js.text()).toBe('console.log("app")');
    const css = await get('/app-WXYZ6789.css');
    expect([css.status, css.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8']);
    const svg = await get('/favicon.svg');
    expect([svg.status, svg.headers.get('content-type'), svg.headers.get('cache-control')]).toEqual([200, 'image/svg+xml', 'no-cache']);
  });

  it('answers a matching ETag with 304 and HEAD without a body', async () => {
    const first = await get('/app-ABCD2345.js');
    const etag = first.headers.get('etag') as string;
    expect(etag).toMatch(/^W\/"/);
    expect((await get('/app-ABCD2345.js', { 'if-none-match': etag })).status).toBe(304);
    const head = await fetch(`${gateway.url}/`, { method: 'HEAD', headers: page });
    expect([head.status, head.headers.get('content-length'), await head.text()]).toEqual([200, String(INDEX.length), '']);
  });

  it('never shadows the gateway routes, and unknown files and API clients keep the JSON 404', async () => {
    for (const path of ['/v1/registry/agents', '/v1/nope', '/docs/nope', '/metrics/x', '/health/x']) {
      const res = await get(path, page);
      expect(res.headers.get('content-type')).toContain('application/json');
    }
    expect((await get('/metrics', page)).headers.get('content-type')).toContain('text/plain');
    const docs = await get('/docs', page);
    expect(docs.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await docs.text()).toContain('Agora API reference');
    const missingFile = await get('/app-MISSING0.js', page);
    expect([missingFile.status, missingFile.headers.get('content-type')]).toEqual([404, 'application/json; charset=utf-8']);
    const apiClient = await get('/fleet', { accept: 'application/json' });
    expect(apiClient.status).toBe(404);
    expect(((await apiClient.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('serves nothing outside its directory', async () => {
    for (const path of ['/../secret.txt', '/%2e%2e/secret.txt', '/..%2fsecret.txt']) {
      const res = await get(path, page);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain('outside the console');
    }
  });

  it('says how to build the console when it is not built, and takes nothing else', async () => {
    const res = await get('/', page, bare.url);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('npm run build');
    expect((await get('/fleet', page, bare.url)).status).toBe(404);
  });

  it('counts console requests under two fixed route labels', async () => {
    const metrics = await (await get('/metrics')).text();
    expect(metrics).toMatch(/agora_gateway_http_requests_total\{route="\/",method="GET",status="200"\}/);
    expect(metrics).toMatch(/agora_gateway_http_requests_total\{route="\/<console asset>",method="GET",status="200"\}/);
    expect(metrics).not.toContain('dialectic_session-a-p1');
  });
});
