/**
 * A debate behind a gateway that closes reads: its parties read it (the debate query and its event
 * stream); an agent who is no party is refused both, exactly as for a debate that does not exist,
 * and its list of debates holds only its own.
 */
import { RegisterAgent, type Reply } from '@agora/contracts';
import { createSignedCommand, generateKeyPair, mintReadToken } from '@agora/identity';
import { startHarness, type Harness } from './support/harness.js';

describe('a debate when reads are closed', () => {
  let h: Harness;
  const nosy = generateKeyPair();
  const token = (agentId: string) => mintReadToken({ agentId, secretKey: agentId === 'nosy' ? nosy.secretKey : h.keys[agentId]!.secretKey });
  const get = async (path: string, agentId: string) => {
    const controller = new AbortController();
    const res = await fetch(`${h.gateway.url}${path}`, { headers: { authorization: `Bearer ${token(agentId)}` }, signal: controller.signal });
    if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      controller.abort();
      return { status: res.status, stream: true, body: undefined };
    }
    return { status: res.status, stream: false, body: (await res.json()) as Reply & Record<string, unknown> };
  };

  beforeAll(async () => {
    h = await startHarness({ reads: 'closed' });
    const envelope = createSignedCommand({ type: RegisterAgent.type, actor: 'root', payload: { agentId: 'nosy', publicKey: nosy.publicKey, displayName: 'nosy', roles: ['debater'] }, secretKey: h.keys['root']!.secretKey });
    const reply = (await h.context.client.request(RegisterAgent.subject, envelope, { timeoutMs: 10_000 })) as Reply;
    if (!reply.ok) throw new Error(reply.error.message);
    await h.open('closed-debate');
  }, 30_000);
  afterAll(() => h?.close());

  it('its parties read it and follow its events', async () => {
    for (const party of ['saylor', 'hayes']) {
      expect((await get('/v1/debate/debates/closed-debate', party)).body).toMatchObject({ ok: true, result: { debateId: 'closed-debate' } });
      expect(await get('/v1/debates/closed-debate/events', party)).toMatchObject({ status: 200, stream: true });
    }
    expect((await get('/v1/debate/debates', 'saylor')).body).toMatchObject({ ok: true, result: { debates: [expect.objectContaining({ debateId: 'closed-debate' })] } });
  });

  it('an agent who is no party learns nothing of it, not even that it exists', async () => {
    const theirs = await get('/v1/debate/debates/closed-debate', 'nosy');
    const missing = await get('/v1/debate/debates/no-such-debate', 'nosy');
    expect(theirs.status).toBe(403);
    expect(theirs.body).toEqual(missing.body);
    const stream = await get('/v1/debates/closed-debate/events', 'nosy');
    const missingStream = await get('/v1/debates/no-such-debate/events', 'nosy');
    expect(stream).toMatchObject({ status: 403, stream: false, body: { ok: false, error: { code: 'forbidden' } } });
    expect(stream.body).toEqual(missingStream.body);
    expect((await get('/v1/debate/debates', 'nosy')).body).toMatchObject({ ok: true, result: { debates: [] } });
  });
});
