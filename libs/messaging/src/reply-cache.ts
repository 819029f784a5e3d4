import { createHash } from 'node:crypto';
import type { Reply } from '@agora/contracts';
import { canonicalJson } from '@agora/identity';
import type { SignedEnvelope } from './command-gate.js';

export const DEFAULT_REPLY_CACHE_SIZE = 1000;

/**
 * The key of a command in the reply cache: its commandId and a hash of the whole envelope. A
 * different envelope that reuses a commandId (another actor, another payload) misses, so it is
 * never answered with someone else's result; the command handler's durable dedup decides it.
 */
export function replyCacheKey(envelope: SignedEnvelope): string {
  return `${envelope.commandId}:${createHash('sha256').update(canonicalJson(envelope)).digest('base64url')}`;
}

/**
 * The last replies of this process, most recent last (a Map keeps insertion order). It only
 * saves re-running a handler for a retried request: the durable "a repeated commandId appends
 * nothing" lives in the command handler, against the event log. A request that arrives while
 * the first copy is still running waits for that run instead of starting a second one.
 */
export class ReplyCache {
  private readonly entries = new Map<string, Promise<Reply>>();

  constructor(readonly capacity = DEFAULT_REPLY_CACHE_SIZE) {
    if (!Number.isSafeInteger(capacity) || capacity < 0) throw new RangeError(`capacity must be a non-negative integer, got ${capacity}`);
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * The cached reply for `key`, or the reply of `run()`. Only successful replies stay cached:
   * a refusal or an outage may not hold next time (the actor may be registered, the store may
   * be back), so a retry runs again.
   */
  async getOrRun(key: string, run: () => Promise<Reply>): Promise<Reply> {
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, cached);
      return asDuplicate(await cached);
    }
    const pending = run();
    if (this.capacity === 0) return pending;
    this.entries.set(key, pending);
    this.evict();
    const reply = await pending.catch((error: unknown) => {
      this.entries.delete(key);
      throw error;
    });
    if (!reply.ok && this.entries.get(key) === pending) this.entries.delete(key);
    return reply;
  }

  private evict(): void {
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}

/** A reply given again from an earlier handling: a command result says so (`duplicate: true`, as the CommandResult schema defines it). */
function asDuplicate(reply: Reply): Reply {
  if (!reply.ok) return reply;
  const result = reply.result as { commandId?: unknown; duplicate?: unknown } | null;
  if (result === null || typeof result !== 'object' || typeof result.commandId !== 'string' || typeof result.duplicate !== 'boolean') return reply;
  return { ok: true, result: { ...result, duplicate: true } };
}
