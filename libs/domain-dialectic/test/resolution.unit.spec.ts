import { signingBytes } from '@agora/identity';
import { DomainError } from '@agora/decider';
import { BadResolutionSignature, requireSignerKey, requireValidSignature, RESOLUTION_SIGNING_TAG, resolutionDigest, resolutionPayload, resolutionSigningBytes, signResolution, verifyResolutionSignature } from '../src/resolution.js';
import { AGENT, c, keysOf, REVIEWER, SID, threshold } from './fixtures.js';
import { SIGNING_TAGS } from '@agora/contracts';
import { COMMAND_SIGNING_TAG } from '@agora/identity/browser';

const payload = resolutionPayload({ sessionId: SID, agentId: AGENT, reviewer: REVIEWER, pause: 1, rootCause: 'External complexity spike', conditions: [threshold(0.48), c('enable_cascade_detection')], decidedBy: 'dialectic' });
const signature = (signer: string, p = payload) => ({ signer, publicKey: keysOf(signer).publicKey, signature: signResolution(p, signer, keysOf(signer).secretKey) });

describe('the resolution payload', () => {
  it('names the session, both agents, the pause, the root cause, the conditions (canonical order) and who decided', () => {
    expect(payload).toEqual({
      sessionId: SID,
      agentId: AGENT,
      reviewer: REVIEWER,
      pause: 1,
      rootCause: 'External complexity spike',
      conditions: [c('enable_cascade_detection'), threshold(0.48)],
      decidedBy: 'dialectic',
      escalation: null,
      decider: null,
    });
    expect(resolutionDigest(payload)).toMatch(/^[0-9a-f]{64}$/);
    expect(resolutionDigest(resolutionPayload({ ...payload, conditions: [...payload.conditions].reverse() }))).toBe(resolutionDigest(payload));
  });

  it('is signed under its own domain tag, with the signer named, never as a command envelope', () => {
    const bytes = resolutionSigningBytes(payload, AGENT).toString('utf8');
    expect(bytes.startsWith(`${RESOLUTION_SIGNING_TAG}\n{"resolution":{`)).toBe(true);
    expect(bytes).toContain(`"signer":"${AGENT}"`);
    expect(RESOLUTION_SIGNING_TAG).not.toBe('agora.command.v1');
    const envelope = signingBytes({ commandId: '00000000-0000-4000-8000-000000000000', type: 'SignResolution', actor: AGENT, issuedAt: '2026-01-01T00:00:00.000Z', payload: { resolution: payload, signer: AGENT } });
    expect(envelope.toString('utf8').startsWith('agora.command.v1\n')).toBe(true);
  });
});

describe('verifyResolutionSignature', () => {
  it("accepts the signer's signature of exactly this payload", () => {
    expect(verifyResolutionSignature(payload, signature(AGENT))).toBe(true);
    expect(verifyResolutionSignature(payload, signature(REVIEWER))).toBe(true);
  });

  it("refuses another payload, another signer's name, another key, and malformed input", () => {
    expect(verifyResolutionSignature({ ...payload, rootCause: 'something else' }, signature(AGENT))).toBe(false);
    expect(verifyResolutionSignature({ ...payload, sessionId: 'critical_agent-p2' }, signature(AGENT))).toBe(false);
    expect(verifyResolutionSignature(payload, { ...signature(REVIEWER), signer: AGENT, publicKey: keysOf(REVIEWER).publicKey })).toBe(false);
    expect(verifyResolutionSignature(payload, { ...signature(AGENT), publicKey: keysOf(REVIEWER).publicKey })).toBe(false);
    expect(verifyResolutionSignature(payload, { ...signature(AGENT), publicKey: 'ed25519:not-a-key' })).toBe(false);
    expect(verifyResolutionSignature(payload, { ...signature(AGENT), signature: 'AAAA' })).toBe(false);
  });

  it('refuses with bad_signature, a DomainError', () => {
    let error: unknown;
    try {
      requireValidSignature(payload, { ...signature(AGENT), publicKey: keysOf(REVIEWER).publicKey });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BadResolutionSignature);
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'bad_signature', details: { sessionId: SID, signer: AGENT, digest: resolutionDigest(payload) } });
    expect(() => requireValidSignature(payload, signature(AGENT))).not.toThrow();
  });

  it("has the service check that the key named is the actor's registered key", () => {
    expect(() => requireSignerKey(AGENT, keysOf(AGENT).publicKey, keysOf(AGENT).publicKey)).not.toThrow();
    expect(() => requireSignerKey(AGENT, undefined, keysOf(AGENT).publicKey)).not.toThrow();
    expect(() => requireSignerKey(AGENT, keysOf(REVIEWER).publicKey, keysOf(AGENT).publicKey)).toThrow(/is not the registered key of critical_agent/);
  });
});

describe('signing tags', () => {
  it('the browser-safe tags are the ones the signing specification names (SIGNING_TAGS)', () => {
    expect(RESOLUTION_SIGNING_TAG).toBe(SIGNING_TAGS.resolution);
    expect(COMMAND_SIGNING_TAG).toBe(SIGNING_TAGS.command);
  });
});
