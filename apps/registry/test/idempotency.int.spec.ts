// Exact idempotency over both transports (in-process, NATS), property-based: signed commands
// reusing a commandId, sent to the registry service. The identical envelope again is the first
// result with `duplicate: true` (from the reply cache or from the log); the same commandId on
// another stream, another type or with another payload is refused `command_id_reused`, and
// nothing is written.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegisterAgent, UpdateAgent, type CommandResult, type Reply } from '@agora/contracts';
import { createSignedCommand, generateKeyPair, type KeyPair, type SignedCommand } from '@agora/identity';
import { openServiceContext, type ServiceContext } from '@agora/runtime';
import { scaled, serviceTransports } from '@agora/testing';
import fc from 'fast-check';
import { startRegistryService } from '../src/registry-service.js';

const SEED = 20_261_123;

// In one process, and over a NATS server of this file's own.
const setups = serviceTransports('idem');

/** What a later envelope does with the commandId of the first. */
type Reuse = 'identical' | 'otherPayload' | 'otherStream' | 'otherType' | 'fresh';

describe.each(setups)('one commandId, one command ($name)', ({ agora }) => {
  let dir: string;
  let root: KeyPair;
  let context: ServiceContext;
  let close: () => Promise<void>;
  const request = <T = CommandResult>(subject: string, body: unknown): Promise<Reply<T>> => context.client.request<T>(subject, body, { timeoutMs: 5_000 });
  /** Events of agent streams (not the command id reservations). */
  const agentEvents = async () => {
    let n = 0;
    for await (const e of context.store.readAll()) if (e.streamId.startsWith('agent-')) n++;
    return n;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-idempotency-'));
    root = generateKeyPair();
    context = await openServiceContext({ ...agora(dir, { agentId: 'root', publicKey: root.publicKey }), requestTimeoutMs: 5_000 });
    const running = await startRegistryService(context, { logger: false });
    close = () => running.close();
  });
  afterAll(async () => {
    await close?.();
    await context?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('random reuses of a commandId: identical envelopes are duplicates, every other reuse is refused and writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom<Reuse>('identical', 'identical', 'otherPayload', 'otherStream', 'otherType', 'fresh'), { minLength: 1, maxLength: 6 }), async (reuses) => {
        const agentId = `a${randomUUID().slice(0, 8)}`;
        const key = generateKeyPair();
        const commandId = randomUUID();
        const register = (id: string, displayName: string, cid = commandId): SignedCommand =>
          createSignedCommand({ type: 'RegisterAgent', actor: 'root', commandId: cid, payload: { agentId: id, publicKey: key.publicKey, displayName, roles: ['observer'] }, secretKey: root.secretKey });
        const original = register(agentId, 'First');
        const first = await request(RegisterAgent.subject, original);
        expect(first).toMatchObject({ ok: true, result: { commandId, streamId: `agent-${agentId}`, duplicate: false } });
        if (!first.ok) return;
        let written = await agentEvents();
        for (const reuse of reuses) {
          if (reuse === 'identical') {
            expect(await request(RegisterAgent.subject, original)).toEqual({ ok: true, result: { ...first.result, duplicate: true } });
          } else if (reuse === 'fresh') {
            const other = await request(RegisterAgent.subject, register(`b${randomUUID().slice(0, 8)}`, 'Other', randomUUID()));
            expect(other).toMatchObject({ ok: true, result: { duplicate: false } });
            written++;
          } else {
            const envelope =
              reuse === 'otherPayload'
                ? register(agentId, 'Second')
                : reuse === 'otherStream'
                  ? register(`c${randomUUID().slice(0, 8)}`, 'First')
                  : createSignedCommand({ type: 'UpdateAgent', actor: 'root', commandId, payload: { agentId, displayName: 'Changed' }, secretKey: root.secretKey });
            const reply = await request(envelope.type === 'UpdateAgent' ? UpdateAgent.subject : RegisterAgent.subject, envelope);
            expect(reply).toMatchObject({ ok: false, error: { code: 'command_id_reused', details: { commandId, streamId: `agent-${agentId}`, commandType: 'RegisterAgent' } } });
          }
          expect(await agentEvents()).toBe(written);
        }
      }),
      { seed: SEED, numRuns: scaled(15, 150), endOnFailure: true },
    );
  }, scaled(120_000, 1_200_000));
});
