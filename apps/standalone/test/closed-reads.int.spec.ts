/**
 * Closed reads (AGORA_READS=closed), tried over HTTP and SSE against a real gateway with the real
 * registry, proposal and tribunal services behind it (in-process transport, embedded store): no
 * read without a read token, each bad token refused with its own code, and each role reading
 * exactly what the visibility table gives it, refusals saying nothing of whether a thing exists.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { get } from 'node:http';
import { DisableAgent, LOGIN, RegisterAgent, SIGNING_TAGS, SubmitProposal, type Reply, type Role } from '@agora/contracts';
import { startGateway, type Gateway } from '@agora/gateway';
import { createSignedCommand, domainSigningBytes, generateKeyPair, mintReadToken, signBytes, signReadToken, type KeyPair } from '@agora/identity';
import { startProjectionsService } from '@agora/projections';
import { startProposalService } from '@agora/proposal';
import { Agora, type AgoraEvent } from '@agora/sdk';
import { startRegistryService } from '@agora/registry';
import { openServiceContext, startAll, type Running, type ServiceContext } from '@agora/runtime';
import { waitFor } from '@agora/testing';
import { startTribunalService } from '@agora/tribunal';

const FLEET: Record<string, Role[]> = { alice: ['executive'], bob: ['executive'], eve: ['observer'], ada: ['auditor'], mal: ['executive'], zed: ['reviewer'] };
const keys: Record<string, KeyPair> = Object.fromEntries(['root', ...Object.keys(FLEET)].map((id) => [id, generateKeyPair()]));

let dir: string;
let context: ServiceContext;
let running: Running;
let gateway: Gateway;
const proposalId = `p-${randomUUID().slice(0, 8)}`;

const token = (agentId: string) => mintReadToken({ agentId, secretKey: keys[agentId]!.secretKey, lifetimeSeconds: 60 });

async function read(path: string, as?: string | { token: string }): Promise<{ status: number; body: Reply & Record<string, unknown> }> {
  const bearer = as === undefined ? undefined : typeof as === 'string' ? token(as) : as.token;
  const res = await fetch(`${gateway.url}${path}`, { headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` } });
  return { status: res.status, body: (await res.json()) as Reply & Record<string, unknown> };
}

async function command(type: string, actor: string, payload: Record<string, unknown>): Promise<void> {
  const envelope = createSignedCommand({ type, actor, payload, secretKey: keys[actor]!.secretKey });
  const res = await fetch(`${gateway.url}/v1/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) });
  const reply = (await res.json()) as Reply;
  if (!reply.ok) throw new Error(`${type}: ${JSON.stringify(reply.error)}`);
}

interface Streamed {
  type: string;
  streamId: string;
  data?: unknown;
  metadata: Record<string, unknown>;
}

/**
 * The events a reader gets of GET /v1/events from the start, up to the registration of `zed`
 * (the last thing the setup does, an agent event every role sees), or its error answer.
 */
function streamed(path: string, bearer?: string): Promise<{ status: number; events: Streamed[]; text: string }> {
  return new Promise((resolve, reject) => {
    const request = get(`${gateway.url}${path}`, { headers: { accept: 'text/event-stream', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) } }, (res) => {
      let text = '';
      const events: Streamed[] = [];
      const timer = setTimeout(() => {
        request.destroy();
        reject(new Error(`no agent-zed event within 10 s; got ${events.map((e) => e.type).join(', ')}`));
      }, 10_000);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (res.statusCode !== 200) return;
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const data = block.split('\n').find((l) => l.startsWith('data: '));
          if (!data) continue;
          const event = JSON.parse(data.slice(6)) as Streamed;
          events.push(event);
          if (event.streamId === 'agent-zed') {
            clearTimeout(timer);
            request.destroy();
            resolve({ status: 200, events, text: '' });
          }
        }
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, events, text });
      });
    });
    request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agora-reads-'));
  context = await openServiceContext({
    store: { kind: 'embedded', directory: join(dir, 'events') },
    natsUrl: undefined,
    dataDir: dir,
    operators: [{ agentId: 'root', publicKey: keys['root']!.publicKey }],
    maxClockSkewMs: 300_000,
    requestTimeoutMs: 10_000,
  });
  running = await startAll([() => startRegistryService(context, { logger: false }), () => startProposalService(context), () => startTribunalService(context), () => startProjectionsService(context, { metricsPort: 0, metricsHost: '127.0.0.1', logger: false })]);
  gateway = await startGateway({ client: context.client, store: context.store, port: 0, host: '127.0.0.1', logger: false, console: false, reads: { mode: 'closed', directory: context.directory } });
  for (const [agentId, roles] of Object.entries(FLEET).filter(([id]) => id !== 'zed')) {
    await command(RegisterAgent.type, 'root', { agentId, publicKey: keys[agentId]!.publicKey, displayName: agentId, roles });
  }
  await command(SubmitProposal.type, 'alice', { proposalId, title: 'Rotate the keys', body: 'Rotate every service key this week.', problem: 'Keys are a year old' });
  await command(RegisterAgent.type, 'root', { agentId: 'zed', publicKey: keys['zed']!.publicKey, displayName: 'zed', roles: FLEET['zed'] });
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await running?.close();
  await context?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('closed reads: who reads', () => {
  it('leave /health open and say the audience there', async () => {
    const res = await fetch(`${gateway.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', reads: { mode: 'closed', audience: 'agora' } });
  });

  it('refuse a read without a token: queries, the event stream and a debate stream, 401 unauthenticated', async () => {
    for (const path of ['/v1/proposal/proposals', `/v1/proposal/proposals/${proposalId}`, '/v1/registry/agents', '/v1/tribunal/stats', '/v1/events', '/v1/debates/d1/events']) {
      const { status, body } = await read(path);
      expect({ path, status, code: body.ok ? 'ok' : body.error.code }).toEqual({ path, status: 401, code: 'unauthenticated' });
    }
  });

  it('refuse each bad token with its own code, 401, and a message that says what is wrong', async () => {
    const now = Math.floor(Date.now() / 1000);
    const alice = keys['alice']!.secretKey;
    const claims = { sub: 'alice', aud: 'agora', iat: now, exp: now + 60 };
    const cases: [string, string][] = [
      ['not.a.token!', 'invalid_token'],
      [signReadToken({ ...claims, sub: 'nobody' }, alice), 'unknown_actor'],
      [signReadToken(claims, keys['bob']!.secretKey), 'bad_signature'],
      [signReadToken({ ...claims, aud: 'another-gateway' }, alice), 'wrong_audience'],
      [signReadToken({ ...claims, iat: now - 600, exp: now - 300 }, alice), 'token_expired'],
      [signReadToken({ ...claims, exp: now + 3_600 }, alice), 'token_lifetime_too_long'],
      [signReadToken({ ...claims, iat: now + 600, exp: now + 660 }, alice), 'token_not_yet_valid'],
    ];
    for (const [bad, code] of cases) {
      const { status, body } = await read('/v1/registry/agents', { token: bad });
      expect({ code, status, got: body.ok ? 'ok' : body.error.code }).toEqual({ code, status: 401, got: code });
      expect(body.ok ? '' : body.error.message).not.toBe('');
    }
    // The same token as ?access_token= (EventSource cannot set a header), and it is not passed to the query.
    const res = await fetch(`${gateway.url}/v1/registry/agents?access_token=${encodeURIComponent(token('alice'))}`);
    expect(res.status).toBe(200);
  });
});

describe('closed reads: what each role reads over HTTP', () => {
  it('operators and auditors read everything', async () => {
    for (const reader of ['root', 'ada']) {
      const one = await read(`/v1/proposal/proposals/${proposalId}`, reader);
      expect(one.status).toBe(200);
      expect((await read('/v1/proposal/proposals', reader)).body).toMatchObject({ ok: true, result: { proposals: [expect.objectContaining({ proposalId })] } });
      expect((await read('/v1/tribunal/coverage', reader)).status).toBe(200);
      // Not found is not found for them.
      expect((await read('/v1/proposal/proposals/no-such-proposal', reader)).body).toMatchObject({ ok: false, error: { code: 'not_found' } });
    }
  });

  it('an agent reads its own proposal, and its list holds its own only', async () => {
    expect((await read(`/v1/proposal/proposals/${proposalId}`, 'alice')).body).toMatchObject({ ok: true, result: { proposalId, proposer: 'alice' } });
    expect((await read('/v1/proposal/proposals', 'alice')).body).toMatchObject({ ok: true, result: { proposals: [expect.objectContaining({ proposalId })] } });
    expect((await read('/v1/proposal/proposals', 'bob')).body).toMatchObject({ ok: true, result: { proposals: [] } });
  });

  it("another agent is refused alice's proposal exactly as it is refused one that does not exist", async () => {
    const theirs = await read(`/v1/proposal/proposals/${proposalId}`, 'bob');
    const none = await read('/v1/proposal/proposals/no-such-proposal', 'bob');
    expect(theirs.status).toBe(403);
    expect(theirs.body).toEqual(none.body);
    expect(theirs.body).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(JSON.stringify(theirs.body)).not.toContain('Rotate');
    expect((await read('/v1/proposal/proposals?proposer=alice', 'bob')).body).toMatchObject({ ok: false, error: { code: 'forbidden' } });
  });

  it('an agent reads the directory and the figures, not what only operators read', async () => {
    expect((await read('/v1/registry/agents', 'bob')).status).toBe(200);
    expect((await read('/v1/registry/agents/alice', 'bob')).status).toBe(200);
    expect((await read('/v1/tribunal/stats', 'bob')).status).toBe(200);
    expect((await read('/v1/tribunal/coverage', 'bob')).body).toMatchObject({ ok: false, error: { code: 'forbidden' } });
  });

  it('an observer reads the figures and nothing else', async () => {
    expect((await read('/v1/tribunal/stats', 'eve')).status).toBe(200);
    for (const path of ['/v1/registry/agents', `/v1/proposal/proposals/${proposalId}`, '/v1/proposal/proposals', '/v1/tribunal/assignments']) {
      const { status, body } = await read(path, 'eve');
      expect({ path, status, code: body.ok ? 'ok' : body.error.code }).toEqual({ path, status: 403, code: 'forbidden' });
    }
  });

  it("a debate's event stream is refused to who is no party to it, whether it exists or not", async () => {
    for (const reader of ['bob', 'eve']) expect((await read('/v1/debates/no-such-debate/events', reader)).body).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect((await read('/v1/debates/no-such-debate/events', 'root')).body).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });
});

describe('closed reads: what each role reads of GET /v1/events', () => {
  const proposalEvents = (events: Streamed[]) => events.filter((e) => e.streamId === `proposal-${proposalId}`);

  it('the operator gets every event whole', async () => {
    const { events } = await streamed('/v1/events', token('root'));
    const mine = proposalEvents(events);
    expect(mine[0]).toMatchObject({ type: 'ProposalSubmitted', data: { proposer: 'alice', title: 'Rotate the keys' }, metadata: { actor: 'alice', commandPayload: expect.anything() } });
  });

  it('the proposer gets its proposal whole (token as ?access_token=), another agent none of it but the directory', async () => {
    const alice = await streamed(`/v1/events?access_token=${encodeURIComponent(token('alice'))}`);
    expect(proposalEvents(alice.events)[0]).toMatchObject({ type: 'ProposalSubmitted', data: { title: 'Rotate the keys' } });
    const bob = await streamed('/v1/events', token('bob'));
    expect(proposalEvents(bob.events)).toEqual([]);
    expect(bob.events.some((e) => e.type === 'AgentRegistered' && (e.data as { agentId?: string }).agentId === 'alice')).toBe(true);
    expect(JSON.stringify(bob.events)).not.toContain('Rotate the keys');
  });

  it('an observer gets every event as metadata only: no data, no signed payload', async () => {
    const { events } = await streamed('/v1/events', token('eve'));
    const submitted = proposalEvents(events)[0]!;
    expect(submitted.type).toBe('ProposalSubmitted');
    expect(submitted).not.toHaveProperty('data');
    expect(submitted.metadata).not.toHaveProperty('commandPayload');
    expect(submitted.metadata).not.toHaveProperty('decision');
    expect(submitted.metadata['actor']).toBe('alice');
    expect(JSON.stringify(events)).not.toContain('Rotate the keys');
  });

  it('without a token the stream is refused', async () => {
    const { status, text } = await streamed('/v1/events');
    expect(status).toBe(401);
    expect(JSON.parse(text)).toMatchObject({ ok: false, error: { code: 'unauthenticated' } });
  });
});

describe('closed reads: logging in with a key (browser sessions)', () => {
  const post = async (base: string, path: string, body?: unknown, cookie?: string) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(cookie ? { cookie } : {}) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, setCookie: res.headers.get('set-cookie') ?? '', body: (await res.json()) as Reply<Record<string, unknown>> };
  };
  const getWith = async (base: string, path: string, cookie: string) => {
    const res = await fetch(`${base}${path}`, { headers: { cookie } });
    return { status: res.status, body: (await res.json()) as Reply<Record<string, unknown>> };
  };
  const challengeOf = async (base: string) => {
    const { body } = await post(base, '/v1/login/challenge');
    if (!body.ok) throw new Error(JSON.stringify(body.error));
    return body.result as { challenge: string; audience: string; expiresAt: string };
  };
  const answer = (agentId: string, challenge: string, aud = 'agora', signer = agentId) => ({ agentId, challenge, signature: signBytes(domainSigningBytes(SIGNING_TAGS.login, { aud, challenge, sub: agentId }), keys[signer]!.secretKey) });
  /** Logs in as `agentId`; the session cookie (name=value) to send back. */
  const logIn = async (base: string, agentId: string) => {
    const { challenge } = await challengeOf(base);
    const reply = await post(base, '/v1/login', answer(agentId, challenge));
    expect(reply).toMatchObject({ status: 200, body: { ok: true, result: { agentId, roles: FLEET[agentId] ?? ['operator'] } } });
    return { cookie: reply.setCookie.split(';')[0]!, setCookie: reply.setCookie };
  };

  it('a signed challenge gives an HttpOnly, SameSite=Strict session cookie that reads as that agent, by the visibility table', async () => {
    const { challenge, audience } = await challengeOf(gateway.url);
    expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(audience).toBe('agora');
    const { setCookie } = await logIn(gateway.url, 'alice');
    expect(setCookie).toMatch(new RegExp(`^${LOGIN.cookie}=[A-Za-z0-9_-]{43}; Max-Age=${LOGIN.sessionSeconds}; Path=/; HttpOnly; SameSite=Strict$`));
    const alice = setCookie.split(';')[0]!;
    expect((await getWith(gateway.url, '/v1/session', alice)).body).toMatchObject({ ok: true, result: { agentId: 'alice', roles: ['executive'], readsAll: false } });
    expect((await getWith(gateway.url, `/v1/proposal/proposals/${proposalId}`, alice)).body).toMatchObject({ ok: true, result: { proposer: 'alice' } });
    const bob = (await logIn(gateway.url, 'bob')).cookie;
    expect((await getWith(gateway.url, `/v1/proposal/proposals/${proposalId}`, bob))).toMatchObject({ status: 403, body: { ok: false, error: { code: 'forbidden' } } });
    const root = (await logIn(gateway.url, 'root')).cookie;
    expect((await getWith(gateway.url, '/v1/session', root)).body).toMatchObject({ ok: true, result: { agentId: 'root', readsAll: true } });
    expect((await getWith(gateway.url, '/v1/tribunal/coverage', root)).status).toBe(200);
  });

  it('a challenge is good once, for this audience, signed by the key registered for the agent named', async () => {
    const { challenge } = await challengeOf(gateway.url);
    // Signed by bob's key for alice: bad_signature; the challenge is then used up, even for a good answer.
    expect(await post(gateway.url, '/v1/login', answer('alice', challenge, 'agora', 'bob'))).toMatchObject({ status: 401, body: { ok: false, error: { code: 'bad_signature' } } });
    expect(await post(gateway.url, '/v1/login', answer('alice', challenge))).toMatchObject({ status: 401, body: { ok: false, error: { code: 'invalid_token' } } });
    const other = await challengeOf(gateway.url);
    expect(await post(gateway.url, '/v1/login', answer('alice', other.challenge, 'another-gateway'))).toMatchObject({ status: 401, body: { ok: false, error: { code: 'bad_signature' } } });
    expect(await post(gateway.url, '/v1/login', answer('alice', 'made-up-challenge'))).toMatchObject({ status: 401, body: { ok: false, error: { code: 'invalid_token' } } });
    const third = await challengeOf(gateway.url);
    expect(await post(gateway.url, '/v1/login', answer('nobody', third.challenge, 'agora', 'alice'))).toMatchObject({ status: 401, body: { ok: false, error: { code: 'unknown_actor' } } });
    expect(await post(gateway.url, '/v1/login', { agentId: 'alice' })).toMatchObject({ status: 400, body: { ok: false, error: { code: 'invalid_command' } } });
    // A made-up cookie reads nothing.
    expect((await getWith(gateway.url, '/v1/registry/agents', `${LOGIN.cookie}=forged`)).body).toMatchObject({ ok: false, error: { code: 'unauthenticated' } });
  });

  it('logout ends the session: its reads are refused and its open event stream ends', async () => {
    const { cookie } = await logIn(gateway.url, 'root');
    const controller = new AbortController();
    const stream = await fetch(`${gateway.url}/v1/events?from=end`, { headers: { cookie, accept: 'text/event-stream' }, signal: controller.signal });
    expect(stream.status).toBe(200);
    const ended = (async () => {
      const reader = stream.body!.getReader();
      for (;;) if ((await reader.read()).done) return true;
    })();
    const out = await post(gateway.url, '/v1/logout', undefined, cookie);
    expect(out).toMatchObject({ status: 200, body: { ok: true } });
    expect(out.setCookie).toMatch(new RegExp(`^${LOGIN.cookie}=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict`));
    expect(await ended).toBe(true);
    for (const path of ['/v1/session', '/v1/registry/agents', '/v1/events']) {
      expect({ path, ...(await getWith(gateway.url, path, cookie)) }).toMatchObject({ path, status: 401, body: { ok: false, error: { code: 'unauthenticated' } } });
    }
    controller.abort();
  });

  it('a disabled agent reads no more with its session', async () => {
    const { cookie } = await logIn(gateway.url, 'mal');
    expect((await getWith(gateway.url, '/v1/registry/agents', cookie)).status).toBe(200);
    await command(DisableAgent.type, 'root', { agentId: 'mal', reason: 'left the fleet' });
    await waitFor(async () => (await getWith(gateway.url, '/v1/registry/agents', cookie)).status === 403, 'the disabled agent to be refused', 15_000);
    expect((await getWith(gateway.url, '/v1/registry/agents', cookie)).body).toMatchObject({ ok: false, error: { code: 'actor_disabled' } });
  });

  it('challenges and sessions expire', async () => {
    let now = Date.now();
    const clocked = await startGateway({ client: context.client, store: context.store, port: 0, host: '127.0.0.1', logger: false, console: false, reads: { mode: 'closed', directory: context.directory, now: () => new Date(now), sessions: { sessionSeconds: 120 } } });
    try {
      const late = await challengeOf(clocked.url);
      now += (LOGIN.challengeSeconds + 1) * 1000;
      expect(await post(clocked.url, '/v1/login', answer('alice', late.challenge))).toMatchObject({ status: 401, body: { ok: false, error: { code: 'invalid_token' } } });
      const { cookie, setCookie } = await logIn(clocked.url, 'alice');
      expect(setCookie).toContain('Max-Age=120;');
      expect((await getWith(clocked.url, '/v1/registry/agents', cookie)).status).toBe(200);
      now += 121_000;
      expect((await getWith(clocked.url, '/v1/registry/agents', cookie)).body).toMatchObject({ ok: false, error: { code: 'unauthenticated' } });
    } finally {
      await clocked.close();
    }
  });

  it('with reads open there is nothing to log in to', async () => {
    const open = await startGateway({ client: context.client, store: context.store, port: 0, host: '127.0.0.1', logger: false, console: false });
    try {
      expect(await post(open.url, '/v1/login/challenge')).toMatchObject({ status: 404, body: { ok: false, error: { code: 'not_found' } } });
    } finally {
      await open.close();
    }
  });
});


describe('closed reads: the SDK over HTTP signs its reads with its signer', () => {
  it('queries and the event stream carry a fresh read token; the visibility table applies to the signer', async () => {
    const alice = await Agora.connect({ url: gateway.url, signer: { secretKey: keys['alice']!.secretKey, agentId: 'alice' } });
    const bob = await Agora.connect({ url: gateway.url, signer: { secretKey: keys['bob']!.secretKey, agentId: 'bob' } });
    const anonymous = await Agora.connect({ url: gateway.url });
    try {
      expect(await alice.query('GetProposal', { proposalId })).toMatchObject({ proposalId, proposer: 'alice' });
      expect(await bob.tryQuery('GetProposal', { proposalId })).toMatchObject({ ok: false, error: { code: 'forbidden' } });
      expect(await anonymous.tryQuery('ListAgents', {})).toMatchObject({ ok: false, error: { code: 'unauthenticated' } });
      const seen: AgoraEvent[] = [];
      for await (const event of alice.events({ from: 'start' })) {
        seen.push(event);
        if (event.streamId === 'agent-zed') break;
      }
      expect(seen.some((e) => e.streamId === `proposal-${proposalId}`)).toBe(true);
    } finally {
      await Promise.all([alice.close(), bob.close(), anonymous.close()]);
    }
  });
});
