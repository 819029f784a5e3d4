/**
 * A decider's refusal says no more than a read would (deciderHandler): for a sender who may not read
 * the aggregate (the visibility table: not a party to a `proposal` stream), every refusal, and "not
 * found", is the same `forbidden` naming nobody; a party, an operator and a refusal of a new
 * aggregate's content keep the decider's own words. On a real embedded store.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgoraError, defineCommand } from '@agora/contracts';
import { DomainError, type Command, type Decider, type DomainEvent } from '@agora/decider';
import { openEmbeddedEventStore, type EventStore } from '@agora/eventstore';
import type { VerifiedCommand } from '@agora/messaging';
import { z } from 'zod';
import { deciderHandler, notYoursRefusal } from '../src/index.js';

type Payload = { proposalId: string; title?: string; close?: boolean };
type Cmd = Command<'Act', Payload>;
type Evt = DomainEvent<'Opened', { proposer: string; title: string }> | DomainEvent<'Closed', Record<string, never>>;
type State = { proposer?: string; closed: boolean };

/** Opens a proposal (its proposer is the actor) or closes it: only its proposer may, once. */
const decider: Decider<Cmd, Evt, State> = {
  initialState: () => ({ closed: false }),
  evolve: (s, e) => (e.type === 'Opened' ? { ...s, proposer: e.data.proposer } : { ...s, closed: true }),
  decide: ({ payload, context }, s) => {
    if (!payload.close) {
      if (s.proposer !== undefined) throw new DomainError('illegal_state', `proposal ${payload.proposalId} already exists (opened by ${s.proposer})`);
      if (!payload.title) throw new DomainError('invalid_command', 'a proposal needs a title');
      return [{ type: 'Opened', data: { proposer: context.actor, title: payload.title } }];
    }
    if (s.proposer === undefined) throw new DomainError('not_found', `no proposal ${payload.proposalId}`);
    if (s.proposer !== context.actor && !context.actorRoles.includes('operator')) throw new DomainError('forbidden', `only the proposer ${s.proposer} may close it`);
    if (s.closed) throw new DomainError('illegal_state', `proposal ${payload.proposalId} is already closed`);
    return [{ type: 'Closed', data: {} }];
  },
};

const Act = defineCommand({ type: 'Act', service: 'test', aggregate: 'proposal', verb: 'act', roles: ['executive', 'operator'], summary: 'A test command', payload: z.object({ proposalId: z.string(), title: z.string().optional(), close: z.boolean().optional() }).strict() });

const as = (agentId: string, roles: string[], payload: Payload): VerifiedCommand<Payload> => ({
  envelope: { commandId: randomUUID(), type: 'Act', actor: agentId, issuedAt: new Date().toISOString(), payload, signature: 'A'.repeat(86) },
  definition: Act,
  payload,
  actor: { agentId, roles },
});

describe('refusals to a sender who may not read the aggregate', () => {
  let dir: string;
  let store: EventStore;
  let handle: ReturnType<typeof deciderHandler<Cmd, Evt, State, Payload>>;
  const refusal = async (command: VerifiedCommand<Payload>): Promise<AgoraError> => {
    const error = await handle(command).then(() => undefined, (e: unknown) => e);
    if (!(error instanceof AgoraError)) throw new Error(`expected a refusal, got ${String(error)}`);
    return error;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-refusals-'));
    store = await openEmbeddedEventStore({ directory: dir });
    handle = deciderHandler({ store, decider, streamOf: (p: Payload) => `proposal-${p.proposalId}` });
    await handle(as('alice', ['executive'], { proposalId: 'p1', title: 'Alice' }));
  });

  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("another executive closing alice's proposal, opening under its id, or closing a missing one: one forbidden, naming nobody", async () => {
    for (const [payload, streamId] of [
      [{ proposalId: 'p1', close: true }, 'proposal-p1'],
      [{ proposalId: 'p1', title: 'Mine' }, 'proposal-p1'],
      [{ proposalId: 'p-none', close: true }, 'proposal-p-none'],
    ] as const) {
      const error = await refusal(as('bob', ['executive'], payload));
      expect({ code: error.code, message: error.message, details: error.details }).toEqual({ code: 'forbidden', message: notYoursRefusal('Act', streamId, 'bob').message, details: { commandType: 'Act' } });
      expect(error.message).not.toContain('alice');
    }
  });

  it("keeps the decider's words for a party, an operator, and a new aggregate's content", async () => {
    await handle(as('alice', ['executive'], { proposalId: 'p1', close: true }));
    expect(await refusal(as('alice', ['executive'], { proposalId: 'p1', close: true }))).toMatchObject({ code: 'illegal_state', message: 'proposal p1 is already closed' });
    expect(await refusal(as('root', ['operator'], { proposalId: 'p-none', close: true }))).toMatchObject({ code: 'not_found', message: 'no proposal p-none' });
    expect(await refusal(as('bob', ['executive'], { proposalId: 'p2' }))).toMatchObject({ code: 'invalid_command', message: 'a proposal needs a title' });
  });
});
