// The HTTP transport's event stream against a local server that refuses it as a gateway does in a
// failover (503 unavailable: the log's store cannot be read for a moment): it is opened again, and
// the events come; a refusal that does not pass (forbidden) ends it at once, saying why.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpTransport } from '../src/index.js';

let server: Server;
let url: string;
let answers: Array<'unavailable' | 'forbidden' | 'events'> = [];
let requests = 0;

beforeAll(async () => {
  server = createServer((_req, res) => {
    requests++;
    const answer = answers.length > 1 ? answers.shift()! : answers[0]!;
    if (answer === 'events') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'e1', type: 'AgentRegistered', streamId: 'agent-a', revision: 0, position: 'p1', recordedAt: new Date().toISOString(), data: {}, metadata: {} })}\n\n`);
      return;
    }
    const code = answer;
    res.writeHead(code === 'unavailable' ? 503 : 403, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: false, error: { code, message: code === 'unavailable' ? 'the event store cannot say where its log ends: JetStream system temporarily unavailable' : 'not yours' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('the event stream over HTTP through a failover', () => {
  it('opens the stream again after the gateway refused it as unavailable, and delivers what follows', async () => {
    answers = ['unavailable', 'unavailable', 'events'];
    requests = 0;
    const stop = new AbortController();
    const transport = new HttpTransport(url);
    for await (const event of transport.events({ signal: stop.signal })) {
      expect(event.position).toBe('p1');
      stop.abort();
      break;
    }
    expect(requests).toBe(3);
  });

  it('ends at once on a refusal that does not pass', async () => {
    answers = ['forbidden'];
    requests = 0;
    const transport = new HttpTransport(url);
    const reading = (async () => {
      for await (const event of transport.events({})) void event;
    })();
    await expect(reading).rejects.toThrow('the gateway refused the event stream: forbidden: not yours');
    expect(requests).toBe(1);
  });
});
