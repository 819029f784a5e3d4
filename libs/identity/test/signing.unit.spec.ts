import { canonicalJson, createSignedCommand, generateKeyPair, parseKeyFile, publicKeyOf, signingBytes, verifyCommandSignature } from '../src/index.js';

describe('canonical JSON', () => {
  it('sorts keys at every depth, drops undefined members, keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' }, u: undefined })).toBe('{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}');
  });
  it('refuses values JSON cannot carry', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
  });
});

describe('command signatures', () => {
  const alice = generateKeyPair();
  const mallory = generateKeyPair();
  const base = { type: 'RegisterAgent', actor: 'alice', payload: { agentId: 'bob', roles: ['reviewer'] }, secretKey: alice.secretKey };

  it("verify under the signer's key, and not under another's", () => {
    const cmd = createSignedCommand(base);
    expect(cmd.signature).toMatch(/^[A-Za-z0-9_-]{86}$/);
    expect(verifyCommandSignature(cmd, alice.publicKey)).toBe(true);
    expect(verifyCommandSignature(cmd, mallory.publicKey)).toBe(false);
  });

  it('break when any signed field changes, including the actor and key order does not matter', () => {
    const cmd = createSignedCommand(base);
    for (const tampered of [
      { ...cmd, actor: 'mallory' },
      { ...cmd, type: 'DisableAgent' },
      { ...cmd, issuedAt: new Date(0).toISOString() },
      { ...cmd, commandId: '00000000-0000-4000-8000-000000000000' },
      { ...cmd, payload: { ...cmd.payload, roles: ['operator'] } },
      { ...cmd, correlationId: 'other' },
    ]) {
      expect(verifyCommandSignature(tampered, alice.publicKey)).toBe(false);
    }
    const reordered = { payload: { roles: ['reviewer'], agentId: 'bob' }, signature: cmd.signature, issuedAt: cmd.issuedAt, actor: cmd.actor, type: cmd.type, commandId: cmd.commandId };
    expect(verifyCommandSignature(reordered, alice.publicKey)).toBe(true);
  });

  it('sign a domain-tagged canonical form', () => {
    const cmd = createSignedCommand({ ...base, commandId: '11111111-1111-4111-8111-111111111111', issuedAt: '2026-01-01T00:00:00.000Z' });
    expect(signingBytes(cmd).toString()).toBe(
      'agora.command.v1\n{"actor":"alice","commandId":"11111111-1111-4111-8111-111111111111","issuedAt":"2026-01-01T00:00:00.000Z","payload":{"agentId":"bob","roles":["reviewer"]},"type":"RegisterAgent"}',
    );
  });

  it('reject a malformed signature without throwing', () => {
    const cmd = createSignedCommand(base);
    expect(verifyCommandSignature({ ...cmd, signature: 'AAAA' }, alice.publicKey)).toBe(false);
  });
});

describe('keys', () => {
  it('derive the public key from the secret and round-trip a key file', () => {
    const pair = generateKeyPair();
    expect(publicKeyOf(pair.secretKey)).toBe(pair.publicKey);
    expect(parseKeyFile(JSON.stringify({ agentId: 'a1', ...pair }))).toEqual({ agentId: 'a1', ...pair });
  });
  it('refuse a key file whose halves do not match', () => {
    const a = generateKeyPair();
    const b = generateKeyPair();
    expect(() => parseKeyFile(JSON.stringify({ publicKey: a.publicKey, secretKey: b.secretKey }))).toThrow(/does not belong/);
    expect(() => parseKeyFile('not json')).toThrow(/key file is JSON/);
  });
});
