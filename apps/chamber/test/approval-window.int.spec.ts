// The approval window is a durable deadline: a proposal nobody approves in time is closed by the
// chamber's scheduler, nothing called; a restart does not lose the deadline.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApproveChamberSession, GetChamberSession, ProposeChamberSession, type ChamberSessionView, type Reply } from '@agora/contracts';
import { createSignedCommand, generateKeyPair } from '@agora/identity';
import { chamberPolicyFromEnv, providersConfigFromEnv, StandIns } from '@agora/providers';
import { openServiceContext, type ServiceContext } from '@agora/runtime';
import { embeddedAgora, waitFor } from '@agora/testing';
import { panelScript, startChamberService, type RunningChamber } from '../src/index.js';

describe('the approval window of a chamber session', () => {
  const root = generateKeyPair();
  let dir: string;
  let stands: StandIns;
  let context: ServiceContext;
  let chamber: RunningChamber;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-chamber-ttl-'));
    stands = await StandIns.start(panelScript({ blind: { openai: 'yes', anthropic: 'yes', google: 'yes' } }));
    context = await openServiceContext(embeddedAgora(dir, { agentId: 'root', publicKey: root.publicKey }));
  });
  afterAll(async () => {
    await chamber?.close();
    await context?.close();
    await stands?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('expires a session nobody approved in time, across a restart, and refuses a late approval; nothing is called', async () => {
    const providers = providersConfigFromEnv(stands.env);
    const start = async () => (chamber = await startChamberService(context, { logger: false, providers, env: stands.env, policy: chamberPolicyFromEnv({ AGORA_CHAMBER_APPROVAL_TTL_MS: '2000' }, providers) }));
    const send = (type: typeof ProposeChamberSession | typeof ApproveChamberSession, payload: Record<string, unknown>) =>
      context.client.request(type.subject, createSignedCommand({ type: type.type, actor: 'root', payload, secretKey: root.secretKey }), { timeoutMs: 10_000 }) as Promise<Reply>;
    await start();
    const sessionId = randomUUID();
    expect(await send(ProposeChamberSession, { sessionId, question: 'Now or later?', rationale: 'timing matters' })).toMatchObject({ ok: true });
    await chamber.close();
    await start(); // the deadline is rebuilt from the log
    const status = async () => ((await context.client.request(GetChamberSession.subject, { sessionId }, { timeoutMs: 5_000 })) as Reply<ChamberSessionView>);
    await waitFor(async () => {
      const reply = await status();
      return reply.ok && reply.result.summary.status === 'expired';
    }, 'the approval window to expire', 15_000);
    expect(await send(ApproveChamberSession, { sessionId })).toMatchObject({ ok: false, error: { code: 'illegal_state' } });
    expect(stands.requests).toEqual([]);
  }, 30_000);
});
