/**
 * The bounds of McpHttpEndpoint's sessions over real HTTP, spoken to by the MCP SDK's client and
 * by raw JSON-RPC: sessions per caller and in all (a clear error past them, nobody's session ended
 * for another's), idle expiry (a session with no request, and none in progress, is closed and its
 * place freed), and what a host's guard may do to a session.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from '@agora/testing';
import { McpHttpEndpoint, type McpCaller, type McpSessionControls } from '../src/http.js';

const controls = new Map<string, McpSessionControls>();
/** Requests of each caller's open session the guard was told of (after initialize: the initialized notification, the notification stream's GET, ...). */
const requests = new Map<string, number>();
const servers: { server: Server; endpoint: McpHttpEndpoint }[] = [];

/** An endpoint of one tool, over HTTP; the caller is named by the x-caller header (the gateway's is its read token's reader). */
async function serve(options: { sessionsPerCaller: number; maxSessions: number; idleMs: number }): Promise<{ url: string; endpoint: McpHttpEndpoint }> {
  const endpoint = new McpHttpEndpoint<McpCaller>(
    () => {
      const mcp = new McpServer({ name: 'bounded', version: '1.0.0' }, { capabilities: { logging: {} } });
      mcp.registerTool('ping', { description: 'answers pong' }, () => ({ content: [{ type: 'text', text: 'pong' }] }));
      return mcp;
    },
    {
      ...options,
      guard: (caller, control) => {
        controls.set(caller.current!.id, control);
        return { updated: () => void requests.set(caller.current!.id, (requests.get(caller.current!.id) ?? 0) + 1), closed: () => void controls.delete(caller.current!.id) };
      },
    },
  );
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => void endpoint.handle(req, res, text === '' ? undefined : JSON.parse(text), { id: String(req.headers['x-caller']) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({ server, endpoint });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, endpoint };
}

afterAll(async () => {
  for (const { server, endpoint } of servers) {
    await endpoint.close();
    await new Promise((resolve) => server.close(resolve));
  }
});

let url: string;
let endpoint: McpHttpEndpoint;

const initialize = (caller: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-caller': caller },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });
const ping = (caller: string, session: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-caller': caller, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ping', arguments: {} } }),
  });
const sdkClient = async (caller: string) => {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { 'x-caller': caller } } });
  const client = new Client({ name: caller, version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
};

it('refuses a caller past its sessions (429) and anyone past all of them (503), ending none; an idle session is closed and its place freed', async () => {
  ({ url, endpoint } = await serve({ sessionsPerCaller: 2, maxSessions: 3, idleMs: 400 }));
  // ann's two sessions hold a notification stream open (the SDK's client): never idle.
  const ann = [await sdkClient('ann'), await sdkClient('ann')];
  const third = await initialize('ann');
  expect(third.status).toBe(429);
  expect(await third.json()).toMatchObject({ error: { message: expect.stringMatching(/^too_many_sessions: ann holds 2 MCP sessions/), data: { code: 'too_many_sessions' } } });
  // ben's raw session sends no request after initialize: it idles out.
  const first = await initialize('ben');
  expect(first.status).toBe(200);
  const idle = first.headers.get('mcp-session-id')!;
  await first.text();
  const full = await initialize('cat');
  expect(full.status).toBe(503);
  expect(full.headers.get('retry-after')).toMatch(/^\d+$/);
  expect(await full.json()).toMatchObject({ error: { data: { code: 'too_many_sessions' } } });

  // (A request would renew it: look from the inside until it is gone, then ask.)
  await waitFor(() => endpoint.size === 2, "ben's idle session to be closed", 5_000);
  expect((await ping('ben', idle)).status).toBe(404);
  // Its place is free; ann's sessions, busy with their streams, were never closed.
  const cat = await initialize('cat');
  expect(cat.status).toBe(200);
  await cat.text();
  for (const { client } of ann) expect(await client.callTool({ name: 'ping', arguments: {} })).toMatchObject({ content: [{ text: 'pong' }] });
  for (const { client } of ann) await client.close();
});

it("a guard ends a session's notification stream (the client takes it up again) or the session, each with a last log message", async () => {
  // Idle expiry far off: the client's notification stream is away for a moment once ended.
  ({ url, endpoint } = await serve({ sessionsPerCaller: 2, maxSessions: 3, idleMs: 60_000 }));
  const { client } = await sdkClient('dan');
  const said: unknown[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void said.push(notification.params.data));
  // The client has sent its initialized notification and opened its notification stream (two requests).
  const streamOpen = async (caller: string, atLeast: number) => {
    await waitFor(() => (requests.get(caller) ?? 0) >= atLeast, `${caller}'s notification stream`, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
  };
  await streamOpen('dan', 2);
  await controls.get('dan')!.endNotifications('token_expired');
  await waitFor(() => said.length === 1, 'the last log message', 5_000);
  expect(said[0]).toEqual({ event: 'end', reason: 'token_expired' });
  // The session goes on; the client opens its stream again (one more request).
  expect(await client.callTool({ name: 'ping', arguments: {} })).toMatchObject({ content: [{ text: 'pong' }] });
  await streamOpen('dan', 4);
  await controls.get('dan')!.close('reader_disabled');
  await waitFor(() => said.length === 2, 'the last log message before the close', 5_000);
  expect(said[1]).toEqual({ event: 'end', reason: 'reader_disabled' });
  await expect(client.callTool({ name: 'ping', arguments: {} })).rejects.toThrow(/Session not found|404/);
  await client.close();
});
