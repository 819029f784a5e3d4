// The checked-in test vectors are what libs/identity and libs/domain-dialectic compute, and verify.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolutionSigningBytes, verifyResolutionSignature, type ResolutionPayload } from '@agora/domain-dialectic';
import { SIGNING_TAGS } from '@agora/contracts';
import { canonicalJson, domainSigningBytes, LOGIN_SIGNING_TAG, loginSigningText, signReadToken, verifyReadToken, type LoginChallengeAnswer, type ReadTokenClaims, publicKeyOf, signingBytes, verifyBytes, verifyCommandSignature, verifyMetadataSignature, type SignedCommand } from '@agora/identity';
import { GENERATED_DIR, staleFiles } from '../src/generated.js';

type Vectors = {
  tags: Record<string, string>;
  keys: { secretKey: string; publicKey: string; publicKeyHex: string; seedHex: string }[];
  canonicalJson: { input: string; canonical: string; canonicalUtf8Hex: string }[];
  envelopes: { publicKey: string; envelope: SignedCommand; signedText: string; signedBytesBase64url: string; signature: string }[];
  eventMetadata: { publicKey: string; metadata: Record<string, unknown>; candidates: string[]; verifies: boolean[] }[];
  domainTagged: { tag: string; signer: string; publicKey: string; value: { resolution: ResolutionPayload; signer: string } | LoginChallengeAnswer; signedText: string; signedBytesBase64url: string; signature: string }[];
  readTokens: { name: string; signer: string; publicKey: string; claims: ReadTokenClaims; headerJson: string; claimsJson: string; signingInput: string; token: string }[];
  mustNotVerify: { publicKey: string; envelope: SignedCommand; signedText: string }[];
};
const vectors = JSON.parse(readFileSync(join(GENERATED_DIR, 'test-vectors.json'), 'utf8')) as Vectors;

describe('generated documents and test vectors', () => {
  it('are checked in and up to date, docs/ included (run `npm run contracts` after changing a schema)', () => {
    expect(staleFiles()).toEqual([]);
  });

  it('read tokens: header and claims are canonical JSON, the token is reproduced, and it verifies at its time', async () => {
    expect(vectors.readTokens.length).toBeGreaterThanOrEqual(2);
    expect(vectors.readTokens[0]!.headerJson).toBe('{"alg":"EdDSA","typ":"agora.read.v1"}');
    expect(vectors.readTokens[0]!.claimsJson).toBe('{"aud":"agora","exp":1767225900,"iat":1767225600,"sub":"alice"}');
    for (const v of vectors.readTokens) {
      const secret = vectors.keys.find((k) => k.publicKey === v.publicKey)!.secretKey;
      const [header, claims, signature] = v.token.split('.') as [string, string, string];
      expect(Buffer.from(header, 'base64url').toString('utf8')).toBe(v.headerJson);
      expect(Buffer.from(claims, 'base64url').toString('utf8')).toBe(v.claimsJson);
      expect(v.claimsJson).toBe(canonicalJson(v.claims));
      expect(`${header}.${claims}`).toBe(v.signingInput);
      expect(verifyBytes(Buffer.from(v.signingInput, 'ascii'), signature, v.publicKey)).toBe(true);
      expect(signReadToken(v.claims, secret)).toBe(v.token);
      const result = await verifyReadToken(v.token, { audience: v.claims.aud, lookup: () => ({ publicKey: v.publicKey, status: 'active' }), now: new Date(v.claims.iat * 1000) });
      expect(result).toEqual({ ok: true, claims: v.claims });
    }
  });

  it('keys: the public key derives from the seed', () => {
    for (const k of vectors.keys) {
      expect(k.secretKey).toBe(`ed25519-secret:${Buffer.from(k.seedHex, 'hex').toString('base64url')}`);
      expect(publicKeyOf(k.secretKey)).toBe(k.publicKey);
      expect(Buffer.from(k.publicKey.slice(8), 'base64url').toString('hex')).toBe(k.publicKeyHex);
    }
  });

  it('canonical JSON of each input is the expected text and bytes', () => {
    expect(vectors.canonicalJson.length).toBeGreaterThanOrEqual(6);
    for (const c of vectors.canonicalJson) {
      expect(canonicalJson(JSON.parse(c.input))).toBe(c.canonical);
      expect(Buffer.from(c.canonical, 'utf8').toString('hex')).toBe(c.canonicalUtf8Hex);
    }
  });

  it('envelopes: the signed bytes are reproduced from the envelope, and the signature verifies', () => {
    for (const v of vectors.envelopes) {
      const bytes = signingBytes(v.envelope);
      expect(bytes.toString('utf8')).toBe(v.signedText);
      expect(bytes.toString('base64url')).toBe(v.signedBytesBase64url);
      expect(v.signedText.startsWith(`${vectors.tags['command']}\n`)).toBe(true);
      expect(v.envelope.signature).toBe(v.signature);
      expect(verifyCommandSignature(v.envelope, v.publicKey)).toBe(true);
    }
    expect(vectors.envelopes.some((v) => v.envelope.correlationId !== undefined && v.signedText.includes('"correlationId"'))).toBe(true);
  });

  it('event metadata: the envelope rebuilt from it verifies', () => {
    for (const m of vectors.eventMetadata) {
      expect(verifyMetadataSignature(m.metadata, m.publicKey).ok).toBe(true);
      expect(m.verifies).toContain(true);
    }
  });

  it('domain-tagged signatures: the resolution bytes are the dialectic service\'s, the login bytes the browser\'s, and all verify', () => {
    expect(vectors.domainTagged.map((d) => d.tag)).toEqual([SIGNING_TAGS.resolution, SIGNING_TAGS.login]);
    expect(LOGIN_SIGNING_TAG).toBe(SIGNING_TAGS.login);
    for (const d of vectors.domainTagged) {
      expect(domainSigningBytes(d.tag, d.value).toString('utf8')).toBe(d.signedText);
      if ('resolution' in d.value) {
        expect(resolutionSigningBytes(d.value.resolution, d.signer).toString('base64url')).toBe(d.signedBytesBase64url);
        expect(verifyResolutionSignature(d.value.resolution, { signer: d.signer, publicKey: d.publicKey, signature: d.signature })).toBe(true);
      } else {
        expect(loginSigningText(d.value)).toBe(d.signedText);
        expect(d.value.sub).toBe(d.signer);
      }
      expect(verifyBytes(Buffer.from(d.signedText, 'utf8'), d.signature, d.publicKey)).toBe(true);
    }
  });

  it('a tampered envelope does not verify', () => {
    for (const v of vectors.mustNotVerify) {
      expect(signingBytes(v.envelope).toString('utf8')).toBe(v.signedText);
      expect(verifyCommandSignature(v.envelope, v.publicKey)).toBe(false);
    }
  });
});
