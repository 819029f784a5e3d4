/**
 * Seeded randomness (seed 001's "weighted random selection", made replayable, and the chamber's
 * shuffled labels): every draw of a session comes from mulberry32 over the session's seed and the
 * draw's purpose, and is recorded in the event it decides, so a replay, or an auditor, reads the
 * draw instead of making it again.
 */
import { createHash } from 'node:crypto';

/** mulberry32: a small, fast 32-bit PRNG; the same seed gives the same sequence everywhere. Floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * The uniform draw in [0, 1) for one purpose of a session (`reviewer`, `tie_breaker:<n>`,
 * `auditor`, `audit`): independent draws from one recorded seed.
 */
export function drawOf(seed: number, purpose: string): number {
  return mulberry32((seed ^ fnv1a(purpose)) >>> 0)();
}

/**
 * A 32-bit seed from a text: the first four bytes of its SHA-256. The service seeds a session with
 * `seedFrom(<id of the AgentPaused event>)`: unknown to anyone before the pause, the same at every
 * redelivery of the event.
 */
export function seedFrom(text: string): number {
  return createHash('sha256').update(text, 'utf8').digest().readUInt32BE(0);
}
