/**
 * The console's signature checks (web/lib/signing.ts), run in Node's WebCrypto as in the browser,
 * against envelopes signed by @agora/identity's node:crypto signer: verified, tampered, unsigned,
 * a key rotation, a service key over time, the later events of a commit, a key file loaded and
 * signing what the services verify.
 */
import { createSignedCommand, generateKeyPair, verifyCommandSignature, type SignedCommand } from '@agora/identity';
import { resolutionPayload, verifyResolutionSignature as verifyResolutionNode } from '@agora/domain-dialectic';
import { loadOperatorKey, SignatureChecker, verifyResolutionSignature } from '../web/lib/signing.js';
import type { AgoraEvent } from '../src/sse-client.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@agora/testing';

let seq = 0;
/** An event as the log records a command's commit: the envelope in the metadata, the payload in the first event's. */
function eventOf(envelope: SignedCommand | undefined, type: string, data: Record<string, unknown>, options: { first?: boolean; actor?: string } = {}): AgoraEvent {
  const n = seq++;
  const metadata: Record<string, unknown> = envelope
    ? { actor: envelope.actor, commandId: envelope.commandId, commandType: envelope.type, issuedAt: envelope.issuedAt, signature: envelope.signature, correlationId: envelope.correlationId ?? envelope.commandId, ...(options.first === false ? {} : { commandPayload: envelope.payload }) }
    : { actor: options.actor ?? 'service:x', commandId: `c${n}`, commandType: type, issuedAt: new Date().toISOString() };
  return { id: `e${n}`, type, streamId: 'agent-x', revision: n, position: String(n), recordedAt: new Date().toISOString(), data, metadata };
}

describe('the console signature checks (WebCrypto)', () => {
  const root = generateKeyPair();
  const alice = generateKeyPair();
  const alice2 = generateKeyPair();
  const tribunalOld = generateKeyPair();
  const tribunalNew = generateKeyPair();
  const sign = (actor: string, key: { secretKey: string }, type: string, payload: Record<string, unknown>, issuedAt?: string) => createSignedCommand({ type, actor, payload, secretKey: key.secretKey, ...(issuedAt ? { issuedAt } : {}) });

  it('verifies in log order: registration, a rotation, tampering, unsigned and unknown keys, later events of a commit, services over time', async () => {
    const checker = new SignatureChecker();
    checker.knowConfigured({
      operators: [{ agentId: 'root', publicKey: root.publicKey }],
      services: { tribunal: [{ publicKey: tribunalOld.publicKey, until: '2026-01-01T00:00:00.000Z' }, { publicKey: tribunalNew.publicKey, from: '2026-01-01T00:00:00.000Z' }] },
    });
    const register = sign('root', root, 'RegisterAgent', { agentId: 'alice', publicKey: alice.publicKey });
    expect(await checker.check(eventOf(register, 'AgentRegistered', { agentId: 'alice', publicKey: alice.publicKey }))).toEqual({ state: 'verified', actor: 'root' });
    // Two events of one commit: the second carries no payload of its own.
    const report = sign('alice', alice, 'ReportHealth', { agentId: 'alice', health: 0.3, risk: 0.7 });
    expect(await checker.check(eventOf(report, 'AgentHealthReported', {}))).toMatchObject({ state: 'verified' });
    expect(await checker.check(eventOf(report, 'AgentPaused', {}, { first: false }))).toMatchObject({ state: 'verified' });
    // Tampered: the recorded payload is not what alice signed.
    const tampered = eventOf(report, 'AgentHealthReported', {});
    tampered.metadata['commandPayload'] = { agentId: 'alice', health: 1, risk: 0 };
    expect(await checker.check(tampered)).toMatchObject({ state: 'failed', actor: 'alice' });
    // A rotation: alice's old commands were checked under the old key, new ones under the new key.
    const rotate = sign('root', root, 'RotateAgentKey', { agentId: 'alice', publicKey: alice2.publicKey });
    expect(await checker.check(eventOf(rotate, 'AgentKeyRotated', { agentId: 'alice', publicKey: alice2.publicKey, previousPublicKey: alice.publicKey }))).toMatchObject({ state: 'verified' });
    expect(await checker.check(eventOf(sign('alice', alice2, 'ReportHealth', { agentId: 'alice', health: 1, risk: 0 }), 'AgentHealthReported', {}))).toMatchObject({ state: 'verified' });
    expect(await checker.check(eventOf(sign('alice', alice, 'ReportHealth', { agentId: 'alice', health: 1, risk: 0 }), 'AgentHealthReported', {}))).toMatchObject({ state: 'failed' });
    // A service: the key in force at issuedAt.
    const opened2025 = sign('service:tribunal', tribunalOld, 'OpenReviewRound', { proposalId: 'p1', round: 1 }, '2025-06-01T00:00:00.000Z');
    const opened2026 = sign('service:tribunal', tribunalNew, 'OpenReviewRound', { proposalId: 'p2', round: 1 }, '2026-06-01T00:00:00.000Z');
    const oldKeyLate = sign('service:tribunal', tribunalOld, 'OpenReviewRound', { proposalId: 'p3', round: 1 }, '2026-06-01T00:00:00.000Z');
    expect(await checker.check(eventOf(opened2025, 'ReviewRoundOpened', {}))).toMatchObject({ state: 'verified' });
    expect(await checker.check(eventOf(opened2026, 'ReviewRoundOpened', {}))).toMatchObject({ state: 'verified' });
    expect(await checker.check(eventOf(oldKeyLate, 'ReviewRoundOpened', {}))).toMatchObject({ state: 'failed' });
    // Unsigned, and an actor whose key nobody configured.
    expect(await checker.check(eventOf(undefined, 'Something', {}))).toEqual({ state: 'unsigned', actor: 'service:x' });
    const stranger = generateKeyPair();
    expect(await checker.check(eventOf(sign('mallory', stranger, 'ReportHealth', { agentId: 'mallory', health: 1, risk: 0 }), 'AgentHealthReported', {}))).toEqual({ state: 'unknown_key', actor: 'mallory' });
  });

  it('loads a key file into a non-extractable key and signs commands and resolutions the services verify; refuses a mismatched file', async () => {
    const ops = generateKeyPair();
    const key = await loadOperatorKey(JSON.stringify({ agentId: 'ops', ...ops }));
    expect([key.agentId, key.publicKey]).toEqual(['ops', ops.publicKey]);
    const envelope = await key.sign('DecideEscalation', { proposalId: 'p1', escalation: 1, decision: 'reject', reason: 'no' });
    expect(verifyCommandSignature(envelope, ops.publicKey)).toBe(true);
    const payload = resolutionPayload({ sessionId: 's-p1', agentId: 'a', reviewer: 'r', pause: 1, rootCause: 'x', conditions: [{ operation: 'set_risk_threshold', parameters: { threshold: 0.5 } }], decidedBy: 'operator', escalation: 2, decider: 'ops' });
    const signature = await key.signResolution(payload);
    expect(verifyResolutionNode(payload, { signer: 'ops', publicKey: ops.publicKey, signature })).toBe(true);
    expect(await verifyResolutionSignature(payload, { signer: 'ops', publicKey: ops.publicKey, signature })).toBe(true);
    expect(await verifyResolutionSignature({ ...payload, rootCause: 'y' }, { signer: 'ops', publicKey: ops.publicKey, signature })).toBe(false);
    await expect(loadOperatorKey(JSON.stringify({ agentId: 'ops', publicKey: generateKeyPair().publicKey, secretKey: ops.secretKey }))).rejects.toThrow(/does not belong/);
    await expect(loadOperatorKey('not json')).rejects.toThrow(/not a key file/);
  });

  it("answers a login challenge with the bytes of the signing specification's login vector", async () => {
    const vectors = JSON.parse(readFileSync(join(REPO_ROOT, 'libs/contracts/generated/test-vectors.json'), 'utf8')) as {
      keys: { name: string; secretKey: string; publicKey: string }[];
      domainTagged: { tag: string; signer: string; value: { aud: string; challenge: string; sub: string }; signature: string }[];
    };
    const login = vectors.domainTagged.find((d) => d.tag === 'agora.login.v1')!;
    const signer = vectors.keys.find((k) => k.name === login.signer)!;
    const key = await loadOperatorKey(JSON.stringify({ agentId: login.value.sub, publicKey: signer.publicKey, secretKey: signer.secretKey }));
    // Ed25519 is deterministic: the browser's signature is the vector's, byte for byte.
    expect(await key.signLogin(login.value.challenge, login.value.aud)).toBe(login.signature);
  });
});
