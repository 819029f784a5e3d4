/**
 * One read path per aggregate, over the real proposal service (in-process transport, embedded
 * store): one proposal (GetProposal) and the list (ListProposals) are answered from the same read
 * model, which here takes in each event 25 ms late, as on a loaded machine. A command's reply waits
 * until that model holds the command, so the next query sees it without being given a position
 * (without that wait, GetProposal right after SubmitProposal answers not_found here).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetProposal, ListProposals, RegisterAgent, SubmitProposal, WithdrawProposal, type CommandResult, type ProposalView, type Reply } from '@agora/contracts';
import { ReadModelPositions } from '@agora/eventsourcing';
import { createSignedCommand, generateKeyPair } from '@agora/identity';
import { startProposalService } from '@agora/proposal';
import { startRegistryService } from '@agora/registry';
import { openServiceContext, type Running, type ServiceContext } from '@agora/runtime';
import { embeddedAgora } from '@agora/testing';
import { lagging } from './support/lagging-store.js';

/** How late the proposal service's read model takes in each event. */
const LAG_MS = 25;
const ROUNDS = 5;

const root = generateKeyPair();
const alice = generateKeyPair();
let dir: string;
let context: ServiceContext;
const running: Running[] = [];

async function send(actor: 'root' | 'alice', type: string, subject: string, payload: Record<string, unknown>): Promise<CommandResult> {
  const envelope = createSignedCommand({ type, actor, payload, secretKey: (actor === 'root' ? root : alice).secretKey });
  const reply = await context.client.request<CommandResult>(subject, envelope, { timeoutMs: 10_000 });
  if (!reply.ok) throw new Error(`${type}: ${reply.error.code} ${reply.error.message}`);
  return reply.result;
}

const ask = <T>(subject: string, params: Record<string, unknown>) => context.client.request<T>(subject, params, { timeoutMs: 10_000 });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agora-aggregate-reads-'));
  context = await openServiceContext(embeddedAgora(dir, { agentId: 'root', publicKey: root.publicKey }));
  running.push(await startRegistryService(context, { logger: false }));
  // The proposal service reads the log through a store whose subscriptions lag: its read model trails every append.
  const readModels = new ReadModelPositions(context.store, 2_000);
  running.push(await startProposalService({ ...context, store: lagging(context.store, LAG_MS), readModels, transport: { ...context.transport, readModels } }, { logger: false }));
  await send('root', RegisterAgent.type, RegisterAgent.subject, { agentId: 'alice', publicKey: alice.publicKey, displayName: 'alice', roles: ['executive'] });
}, 60_000);

afterAll(async () => {
  for (const part of running.reverse()) await part.close();
  await context?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('one read path per aggregate', () => {
  it('a proposal and the list are read from one model, and a command is in it as soon as its reply comes', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const proposalId = `p-${round}-${randomUUID().slice(0, 8)}`;
      await send('alice', SubmitProposal.type, SubmitProposal.subject, { proposalId, title: `Plan ${round}`, body: 'Rotate every service key this week.', problem: 'Keys are a year old' });
      const one = await ask<ProposalView>(GetProposal.subject, { proposalId });
      expect(one).toMatchObject({ ok: true, result: { proposalId, proposer: 'alice', status: 'review' } });
      const listed = await ask<{ proposals: { proposalId: string }[] }>(ListProposals.subject, { proposer: 'alice', limit: 1000 });
      expect(listed.ok && listed.result.proposals.map((p) => p.proposalId)).toContain(proposalId);

      await send('alice', WithdrawProposal.type, WithdrawProposal.subject, { proposalId, reason: 'superseded' });
      const after = (await ask<ProposalView>(GetProposal.subject, { proposalId })) as Reply<ProposalView>;
      expect(after).toMatchObject({ ok: true, result: { proposalId, status: 'withdrawn' } });
      // The one proposal and its line in the list are the same record, at the same revision.
      const line = await ask<{ proposals: { proposalId: string; status: string; revision: number }[] }>(ListProposals.subject, { proposer: 'alice', limit: 1000 });
      expect(line.ok && line.result.proposals.find((p) => p.proposalId === proposalId)).toMatchObject({ status: 'withdrawn', revision: after.ok ? after.result.revision : -1 });
    }
  }, 60_000);

  it('an unknown proposal is not_found from the model, as before', async () => {
    expect(await ask(GetProposal.subject, { proposalId: 'p-none' })).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });
});
