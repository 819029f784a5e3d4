// The role loops against a transport that answers as a cluster does in a failover and with reads
// scoped to the parties: a read that is behind or unavailable for a while is asked again, and a
// session the agent may not read (forbidden: it is not a party) is passed over; neither stops the loop.
import type { Reply } from '@agora/contracts';
import { generateKeyPair } from '@agora/identity';
import { Agora, onDialecticTurn, type AgoraEvent, type EventFilter, type Transport } from '../src/index.js';

function event(n: number, sessionId: string): AgoraEvent {
  return { id: `e${n}`, type: 'ReviewerSelected', streamId: `dialectic_session-${sessionId}`, revision: 1, position: `p${n}`, recordedAt: new Date().toISOString(), data: { sessionId }, metadata: {} };
}

/** Events given once; each query answered by `answers` in turn (by session id); commands recorded. */
function scriptedTransport(events: AgoraEvent[], answers: Record<string, Reply<unknown>[]>) {
  const commands: string[] = [];
  const transport: Transport = {
    kind: 'http',
    async command(definition, envelope) {
      commands.push(`${definition.type} ${(envelope.payload as { sessionId: string }).sessionId}`);
      return { ok: true, result: { commandId: envelope.commandId, streamId: 's', events: ['ThesisSubmitted'], revision: 2, duplicate: false } };
    },
    async query(_definition, params) {
      const list = answers[params['sessionId'] as string]!;
      return list.length > 1 ? list.shift()! : list[0]!;
    },
    async *events(filter: EventFilter) {
      filter.onOpen?.();
      yield* events;
      await new Promise<void>((resolve) => filter.signal?.addEventListener('abort', () => resolve(), { once: true }));
    },
    async close() {},
  };
  return { transport, commands };
}

const session = (sessionId: string) => ({ sessionId, agentId: 'nova', awaiting: ['nova'], status: 'awaiting_thesis', round: 0 });

describe('role loops through a failover and scoped reads', () => {
  it('asks a read again while it is behind or unavailable, passes over a session it may not read, and acts on its own', async () => {
    const { transport, commands } = scriptedTransport([event(1, 'other'), event(2, 'mine')], {
      other: [{ ok: false, error: { code: 'forbidden', message: 'nova may not read this answer: an agent reads only what it is a party to' } }],
      mine: [
        { ok: false, error: { code: 'read_model_behind', message: 'behind' } },
        { ok: false, error: { code: 'unavailable', message: 'cannot reach the gateway' } },
        { ok: true, result: session('mine') },
      ],
    });
    const agora = Agora.over(transport, { signer: { agentId: 'nova', secretKey: generateKeyPair().secretKey } });
    const turns: string[] = [];
    const loop = onDialecticTurn(agora, async (turn) => {
      turns.push(`${turn.kind} ${turn.session.sessionId}`);
      return { rootCause: 'A spike', proposedConditions: [], reasoning: 'External' };
    });
    for (let i = 0; i < 100 && commands.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    await loop.stop();
    await expect(loop.done).resolves.toBeUndefined();
    expect(turns).toEqual(['thesis mine']);
    expect(commands).toEqual(['SubmitThesis mine']);
  });

  it('stops on a refusal a read does not get over (a session that is not there)', async () => {
    const { transport } = scriptedTransport([event(1, 'mine')], { mine: [{ ok: false, error: { code: 'not_found', message: 'no such session' } }] });
    const agora = Agora.over(transport, { signer: { agentId: 'nova', secretKey: generateKeyPair().secretKey } });
    const loop = onDialecticTurn(agora, async () => undefined);
    await expect(loop.done).rejects.toMatchObject({ code: 'not_found' });
  });
});
