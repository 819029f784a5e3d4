import type { DebateView, Reply } from '@agora/contracts';
import { moveOf, type ScriptedMove } from '@agora/domain-debate';

/** How a debater runner reaches Agora: a signed move as an agent, and the debate as it stands. */
export interface DebateClient {
  /** Sends PostDebateMove signed by `agentId`. */
  move(agentId: string, payload: Record<string, unknown>): Promise<Reply<{ events: string[] }>>;
  debate(debateId: string): Promise<DebateView>;
}

/**
 * Plays scripted moves (the seed's debate, exampleScript) one after the other, each made against
 * the debate as it stands (moves that refer to an earlier message read it). A refused move stops
 * the play with the refusal: a script that does not fit the protocol is a bug to see.
 */
export async function playScript(client: DebateClient, debateId: string, steps: readonly ScriptedMove[], onStep?: (step: ScriptedMove, events: string[]) => void | Promise<void>): Promise<void> {
  for (const step of steps) {
    const move = moveOf(step, await client.debate(debateId));
    const reply = await client.move(step.agentId, { debateId, threadId: 'main', move });
    if (!reply.ok) throw new Error(`${step.agentId} ${move.kind} refused: ${reply.error.code} ${reply.error.message}`);
    await onStep?.(step, reply.result.events);
  }
}
