import { createHash } from 'node:crypto';
import {
  canonicalJson,
  commitHash,
  commitsOf,
  createSignedCommand,
  generateKeyPair,
  genesisCommitHash,
  nextCommitLink,
  parseServiceKeyring,
  serviceKeyAt,
  verifyMetadataSignature,
  verifyStreamChain,
  type ChainEvent,
} from '../src/index.js';

/** A stream of commits linked as the command handler links them. */
function chained(streamId: string, commits: { commandId: string; types: string[] }[]): ChainEvent[] {
  const out: ChainEvent[] = [];
  let last: ChainEvent[] | undefined;
  for (const c of commits) {
    const link = nextCommitLink(streamId, last);
    const commit = c.types.map((type, i) => ({ id: `${c.commandId}-${i}`, type, data: { i }, metadata: { commandId: c.commandId, actor: 'a', prevCommitHash: link } }));
    out.push(...commit);
    last = commit;
  }
  return out;
}

describe('the commit chain', () => {
  const stream = chained('thing-1', [
    { commandId: 'c1', types: ['A', 'B'] },
    { commandId: 'c2', types: ['C'] },
    { commandId: 'c3', types: ['D', 'E', 'F'] },
  ]);

  it('defines the genesis value and the commit hash exactly', () => {
    expect(genesisCommitHash('thing-1')).toBe(createHash('sha256').update('agora.commit-chain.v1\ngenesis\nthing-1').digest('hex'));
    const commit = stream.slice(0, 2);
    expect(commitHash(commit)).toBe(createHash('sha256').update(`agora.commit-chain.v1\n${canonicalJson(commit.map(({ id, type, data, metadata }) => ({ id, type, data, metadata })))}`).digest('hex'));
    expect(commitsOf(stream).map((c) => c.map((e) => e.type).join(''))).toEqual(['AB', 'C', 'DEF']);
  });

  it('verifies an intact stream', () => {
    expect(verifyStreamChain('thing-1', stream)).toEqual([]);
  });

  it('finds an edited event, a removed commit, a removed first commit, a stream moved elsewhere, a missing link', () => {
    const edited = stream.map((e, i) => (i === 2 ? { ...e, data: { i: 99 } } : e));
    expect(verifyStreamChain('thing-1', edited)).toEqual([expect.objectContaining({ commit: 2, eventId: 'c3-0' })]);
    const removed = stream.filter((e) => e.metadata['commandId'] !== 'c2');
    expect(verifyStreamChain('thing-1', removed)).toEqual([expect.objectContaining({ commit: 1, eventId: 'c3-0' })]);
    const headless = stream.filter((e) => e.metadata['commandId'] !== 'c1');
    expect(verifyStreamChain('thing-1', headless)).toEqual([expect.objectContaining({ commit: 0, reason: expect.stringMatching(/genesis/) })]);
    expect(verifyStreamChain('thing-2', stream)).toEqual([expect.objectContaining({ commit: 0 })]);
    const unlinked = stream.map((e, i) => (i === 3 ? { ...e, metadata: { commandId: 'c3', actor: 'a' } } : e));
    expect(verifyStreamChain('thing-1', unlinked).map((f) => f.reason)).toEqual(['the events of this commit carry different prevCommitHash values']);
    const reordered = [...stream.slice(2, 3), ...stream.slice(0, 2), ...stream.slice(3)];
    expect(verifyStreamChain('thing-1', reordered).length).toBeGreaterThan(0);
  });
});

describe('signatures recorded in metadata', () => {
  const alice = generateKeyPair();
  const envelope = createSignedCommand({ type: 'DoThing', actor: 'alice', payload: { n: 1 }, secretKey: alice.secretKey, causationId: 'event-1' });
  const metadata = { actor: 'alice', commandId: envelope.commandId, commandType: 'DoThing', issuedAt: envelope.issuedAt, signature: envelope.signature, causationId: 'event-1', commandPayload: { n: 1 } };

  it("verifies under the signer's key, and not under another, nor when anything signed was edited", () => {
    expect(verifyMetadataSignature(metadata, alice.publicKey)).toMatchObject({ ok: true });
    expect(verifyMetadataSignature(metadata, generateKeyPair().publicKey)).toMatchObject({ ok: false, reason: expect.stringMatching(/does not verify/) });
    expect(verifyMetadataSignature({ ...metadata, commandPayload: { n: 2 } }, alice.publicKey).ok).toBe(false);
    expect(verifyMetadataSignature({ ...metadata, actor: 'bob' }, alice.publicKey).ok).toBe(false);
    expect(verifyMetadataSignature({ ...metadata, causationId: 'event-2' }, alice.publicKey).ok).toBe(false);
  });

  it('accepts the correlation id the gate records for a command that had none', () => {
    expect(verifyMetadataSignature({ ...metadata, correlationId: envelope.commandId }, alice.publicKey).ok).toBe(true);
    expect(verifyMetadataSignature({ ...metadata, correlationId: 'other' }, alice.publicKey).ok).toBe(false);
  });

  it('says why when there is nothing to verify', () => {
    expect(verifyMetadataSignature({ ...metadata, signature: undefined }, alice.publicKey)).toEqual({ ok: false, reason: 'unsigned: the metadata carries no signature' });
    expect(verifyMetadataSignature({ ...metadata, commandPayload: undefined }, alice.publicKey)).toMatchObject({ ok: false, reason: expect.stringMatching(/commandPayload/) });
  });
});

describe('the service keyring', () => {
  const [k1, k2, k3] = [generateKeyPair(), generateKeyPair(), generateKeyPair()];
  const ring = parseServiceKeyring({
    tribunal: k1.publicKey,
    dialectic: [
      { publicKey: k2.publicKey, until: '2026-03-01T00:00:00Z' },
      { publicKey: k3.publicKey, from: '2026-03-01T00:00:00Z' },
    ],
  });

  it('gives the key in force at a time: rotations by from/until', () => {
    expect(serviceKeyAt(ring, 'tribunal', '2020-01-01T00:00:00Z')).toBe(k1.publicKey);
    expect(serviceKeyAt(ring, 'dialectic', '2026-02-28T23:59:59Z')).toBe(k2.publicKey);
    expect(serviceKeyAt(ring, 'dialectic', '2026-03-01T00:00:00Z')).toBe(k3.publicKey);
    expect(serviceKeyAt(ring, 'voting', '2026-03-01T00:00:00Z')).toBeUndefined();
    expect(serviceKeyAt(ring, 'toString', '2026-03-01T00:00:00Z')).toBeUndefined();
    expect(serviceKeyAt(ring, 'tribunal', 'not a time')).toBeUndefined();
  });

  it('refuses a malformed keyring, saying what is wrong', () => {
    expect(() => parseServiceKeyring([])).toThrow(/service keys are an object/);
    expect(() => parseServiceKeyring({ tribunal: 'nope' })).toThrow(/service "tribunal" key 0: a public key is/);
    expect(() => parseServiceKeyring({ tribunal: [{ publicKey: k1.publicKey, until: 'soon' }] })).toThrow(/until must be an ISO-8601 time/);
  });
});
