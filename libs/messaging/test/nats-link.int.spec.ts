// A connection whose link dies silently (packets stop, no FIN, no RST: a cut network, a node frozen)
// notices it from its own pings and reconnects to another server of its list, within the link check's
// (maxPingsOut + 1) x pingIntervalMs; nats.js's defaults would wait about 4 minutes.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { natsLinkCheck } from '@agora/contracts';
import { connectNats, DEFAULT_NATS_URL } from '../src/index.js';

const NATS_URL = (process.env['NATS_URL'] ?? DEFAULT_NATS_URL).replace(/^(?!nats:\/\/)/, 'nats://');

/** A TCP relay to the server that can go silent, as a node cut off does: it carries no byte more, closes nothing, and new connections hang. */
async function silentableRelay(target: URL): Promise<{ url: string; silence(): void; close(): void }> {
  const sockets: Socket[] = [];
  let silent = false;
  const server: Server = createServer((client) => {
    if (silent) return void sockets.push(client);
    const upstream = new (client.constructor as typeof Socket)();
    upstream.connect(Number(target.port), target.hostname);
    sockets.push(client, upstream);
    client.on('data', (chunk) => silent || upstream.write(chunk));
    upstream.on('data', (chunk) => silent || client.write(chunk));
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `nats://127.0.0.1:${(server.address() as AddressInfo).port}`,
    silence() {
      silent = true;
    },
    close() {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

describe('a NATS connection whose link goes silent', () => {
  it('reads its ping interval and unanswered pings from the environment, 4 s and 2 by default, and refuses nonsense', () => {
    expect(natsLinkCheck({})).toEqual({ pingIntervalMs: 4_000, maxPingsOut: 2 });
    expect(natsLinkCheck({ NATS_PING_INTERVAL_MS: '1500', NATS_MAX_PINGS_OUT: '3' })).toEqual({ pingIntervalMs: 1_500, maxPingsOut: 3 });
    expect(() => natsLinkCheck({ NATS_PING_INTERVAL_MS: 'soon' })).toThrow(/NATS_PING_INTERVAL_MS="soon" must be a whole number/);
    expect(() => natsLinkCheck({ NATS_MAX_PINGS_OUT: '0' })).toThrow(/NATS_MAX_PINGS_OUT="0"/);
  });

  it('notices it from its pings and goes on through the other server of its list, not dialling the silent one again first', async () => {
    const nats = { url: NATS_URL };
    const relay = await silentableRelay(new URL(NATS_URL.replace(/^nats:/, 'http:')));
    const linkCheck = { pingIntervalMs: 250, maxPingsOut: 2 };
    // The relay and the server itself, as two nodes of a cluster; the client picks one at random: the relay is wanted.
    let nc = await connectNats({ servers: [relay.url, nats.url], name: 'link-check-test', linkCheck });
    for (let i = 0; i < 20 && nc.getServer() !== relay.url.slice('nats://'.length); i++) {
      await nc.close();
      nc = await connectNats({ servers: [relay.url, nats.url], name: 'link-check-test', linkCheck });
    }
    try {
      expect(nc.getServer()).toBe(relay.url.slice('nats://'.length));
      const reconnected = (async () => {
        for await (const status of nc.status()) if (status.type === 'reconnect') return Date.now();
        return undefined;
      })();
      const silencedAt = Date.now();
      relay.silence();
      let timer: NodeJS.Timeout | undefined;
      const at = await Promise.race([reconnected, new Promise<undefined>((r) => (timer = setTimeout(r, 10_000, undefined)))]);
      clearTimeout(timer);
      expect(at).toBeDefined();
      const noticedMs = at! - silencedAt;
      // At most (maxPingsOut + 1) intervals to notice, and a moment to connect to the other server.
      expect(noticedMs).toBeLessThan((linkCheck.maxPingsOut + 1) * linkCheck.pingIntervalMs + 1_000);
      expect(nc.getServer()).toBe(nats.url.slice('nats://'.length));
      // And it works there.
      const sub = nc.subscribe('link.check.echo', { callback: (_e, m) => void m.respond(m.data) });
      expect(new TextDecoder().decode((await nc.request('link.check.echo', 'hi', { timeout: 2_000 })).data)).toBe('hi');
      sub.unsubscribe();
    } finally {
      await nc.close();
      relay.close();
    }
  }, 30_000);
});
