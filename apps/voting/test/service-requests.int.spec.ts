/**
 * A command another service sends the voting service (as the dialectic's quorum escalation does):
 * a reactor of service:dialectic answers events with CreateVotingSession through the voting
 * service's command path. Sent before the voting service answers, it is retried until it does; one
 * the gate refuses for good is logged and skipped, and the reactor goes on with the next event.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateVotingSession, type RiskLevel } from '@agora/contracts';
import { openServiceContext, runReactor, serviceRequest, type Running, type ServiceContext } from '@agora/runtime';
import { serviceTransports, waitFor } from '@agora/testing';
import { startVotingService, type RunningVoting } from '../src/voting-service.js';
import { AGENTS, generateKeys, registerAgents } from './support/fleet.js';

describe.each(serviceTransports('service-requests'))('commands another service sends the voting service ($name)', ({ agora }) => {
  let dir: string;
  let context: ServiceContext;
  let voting: RunningVoting | undefined;
  let reactor: Running | undefined;
  const warnings: string[] = [];
  const keys = generateKeys();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-service-requests-'));
    context = await openServiceContext({ ...agora(dir, { agentId: 'root', publicKey: keys['root']!.publicKey }), requestTimeoutMs: 2_000 });
    await registerAgents(context.store, keys);
    await waitFor(() => context.registry.list().length === Object.keys(AGENTS).length, 'the agent directory to know every agent');
  });

  afterAll(async () => {
    await reactor?.close();
    await voting?.close();
    await context?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const probe = (n: number, riskLevel: string) => context.store.append(`probe-${n}`, [{ type: 'Probe', data: { requestId: `q${n}`, riskLevel } }], 'no_stream');
  const created = async (requestId: string) => (await context.store.readStream(`voting_session-${requestId}`).catch(() => []))[0];

  it('retries until the voting service answers, skips a command its gate refuses for good, and goes on', async () => {
    await probe(1, 'high');
    const started = runReactor(context, {
      name: 'probe',
      as: context.serviceIdentity('dialectic'),
      categories: ['probe'],
      react: (event) => {
        const { requestId, riskLevel } = event.data as { requestId: string; riskLevel: RiskLevel };
        return [serviceRequest(CreateVotingSession, { requestId, requestingAgent: 'deployer', actionType: 'resume_paused_agent', riskLevel, criteria: { minTrustScore: 0, excludeAgents: [], preferredSpecializations: [] } })];
      },
      logger: { warn: (message: string) => warnings.push(message) },
    });
    // No voting service yet: the first request cannot be answered, and nothing is written.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await created('q1')).toBeUndefined();

    voting = await startVotingService(context, { logger: false });
    reactor = await started;
    await waitFor(async () => (await created('q1')) !== undefined, 'the session of q1, once the voting service answers', 20_000);
    expect((await created('q1'))!.metadata).toMatchObject({ actor: 'service:dialectic', commandType: 'CreateVotingSession' });

    await probe(2, 'extreme');
    await probe(3, 'high');
    await waitFor(async () => (await created('q3')) !== undefined, 'the session of q3, after the refused q2', 20_000);
    expect(await created('q2')).toBeUndefined();
    // The unanswered q1 was retried (the consumer says so), the refused q2 skipped once, with the gate's reason.
    const retries = warnings.filter((w) => w.startsWith('[consumer probe]'));
    expect(retries.length).toBeGreaterThan(0);
    for (const retry of retries) expect(retry).toMatch(/^\[consumer probe\] handle failed on probe-1@0 \(attempt \d+\); retrying$/);
    expect(warnings.filter((w) => !retries.includes(w))).toEqual([expect.stringMatching(/^\[reactor probe\] CreateVotingSession to agora\.cmd\.voting\.session\.create in answer to Probe .* refused \(invalid_command\): .*riskLevel.*; skipped$/)]);
  }, 60_000);
});
