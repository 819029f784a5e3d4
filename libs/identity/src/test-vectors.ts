/**
 * Test vectors of the signing specification, written to libs/contracts/generated/test-vectors.json
 * by `npm run contracts`: keys from fixed seeds, canonical JSON cases, signed envelopes, an event's
 * metadata to re-verify, and a resolution signature, each with the exact bytes signed and the
 * signature (Ed25519 is deterministic, so every implementation reproduces them byte for byte).
 */
import { createHash } from 'node:crypto';
import { SIGNING_TAGS } from '@agora/contracts';
import { canonicalJson } from './canonical-json.js';
import { envelopesFromMetadata } from './log-envelope.js';
import { domainSigningBytes, signBytes, signCommand, signingBytes, verifyCommandSignature, type UnsignedCommand } from './envelope-signing.js';
import { publicKeyOf } from './keys.js';
import { signReadToken, type ReadTokenClaims } from './read-token.js';

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/** A key pair from a fixed seed: sha256 of a label. */
function fixedKey(label: string) {
  const seed = createHash('sha256').update(`agora test vector ${label}`, 'utf8').digest();
  const secretKey = `ed25519-secret:${b64url(seed)}`;
  const publicKey = publicKeyOf(secretKey);
  return { name: label, seedHex: seed.toString('hex'), secretKey, publicKey, publicKeyHex: Buffer.from(publicKey.slice('ed25519:'.length), 'base64url').toString('hex') };
}

/** Canonical JSON cases: `input` is JSON text as it would arrive; `canonical` what RFC 8785 makes of it. */
const CANONICAL_INPUTS: { name: string; input: string }[] = [
  { name: 'rfc8785 section 3.2.2', input: '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}' },
  { name: 'rfc8785 section 3.2.3 (key order by UTF-16 code units)', input: '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}' },
  { name: 'integers written as doubles', input: '[1.0,-0,0,100,1e20,1e21,295147905179352825856,9007199254740993,-9007199254740992]' },
  { name: 'fractions and exponents', input: '[0.1,0.000001,1e-7,1.5e-7,123.456,5e-324,1.7976931348623157e308,9.999999999999997e-7,1424953923781206.2]' },
  { name: 'string escaping', input: '"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001f \\"\\\\/\\u007f\\u2028\\u00e9\\ud83d\\ude00"' },
  { name: 'nested objects and arrays keep array order', input: '{"b":[3,{"z":1,"y":[]}],"a":{},"A":null,"aa":false}' },
];

const ISSUED_AT = '2026-01-01T00:00:00.000Z';

export function signingTestVectors(): Record<string, unknown> {
  const alice = fixedKey('alice');
  const root = fixedKey('root');
  const keys = [alice, root];

  const canonical = CANONICAL_INPUTS.map(({ name, input }) => {
    const out = canonicalJson(JSON.parse(input));
    return { name, input, canonical: out, canonicalUtf8Hex: Buffer.from(out, 'utf8').toString('hex') };
  });

  const envelopeCases: { name: string; key: typeof alice; envelope: UnsignedCommand }[] = [
    {
      name: 'register an agent (operator)',
      key: root,
      envelope: { commandId: '00000000-0000-4000-8000-000000000001', type: 'RegisterAgent', actor: 'root', issuedAt: ISSUED_AT, payload: { agentId: 'alice', publicKey: alice.publicKey, displayName: 'Alice', roles: ['executive'] } },
    },
    {
      name: 'floats',
      key: alice,
      envelope: { commandId: '00000000-0000-4000-8000-000000000002', type: 'CastValidatorVote', actor: 'alice', issuedAt: ISSUED_AT, payload: { sessionId: 's1', vote: 'approve', confidence: 0.85, weights: [0.4, 0.3, 0.2, 0.1], half: 1.5, whole: 2 } },
    },
    {
      name: 'large and small numbers',
      key: alice,
      envelope: { commandId: '00000000-0000-4000-8000-000000000003', type: 'ReportHealth', actor: 'alice', issuedAt: ISSUED_AT, payload: { big: 1e21, below: 1e20, huge: 295147905179352830000, tiny: 1e-7, smallest: 5e-324, largest: 1.7976931348623157e308, micro: 0.000001, negative: -0.5 } },
    },
    {
      name: 'non-ASCII text and key order',
      key: alice,
      envelope: {
        commandId: '00000000-0000-4000-8000-000000000004',
        type: 'SubmitProposal',
        actor: 'alice',
        issuedAt: ISSUED_AT,
        payload: { proposalId: 'p-ü', title: 'Überprüfung — 検証 😀', body: 'Zeile 1\nZeile 2\t"zitiert" \\ \u0001', problem: 'דּ and 😀 and € and ö', 'é': 1, e: 2, z: 3 },
      },
    },
    {
      name: 'correlationId and causationId are signed',
      key: alice,
      envelope: { commandId: '00000000-0000-4000-8000-000000000005', type: 'SubmitProposal', actor: 'alice', issuedAt: ISSUED_AT, correlationId: 'chain-42', causationId: '00000000-0000-4000-8000-000000000004', payload: { proposalId: 'p2', title: 'T', body: 'B', problem: 'P' } },
    },
  ];
  const envelopes = envelopeCases.map(({ name, key, envelope }) => {
    const signed = signCommand(envelope, key.secretKey);
    const bytes = signingBytes(envelope);
    return { name, signer: key.name, publicKey: key.publicKey, envelope: signed, signedText: bytes.toString('utf8'), signedBytesBase64url: b64url(bytes), signature: signed.signature };
  });

  // An envelope without correlationId, as its events record it: the metadata's correlationId is then the commandId.
  const first = envelopes[0]!.envelope;
  const metadata = {
    name: 're-verify RegisterAgent from its event: correlationId equals commandId, so the envelope without it verifies',
    publicKey: root.publicKey,
    metadata: { actor: first.actor, commandId: first.commandId, commandType: first.type, issuedAt: first.issuedAt, signature: first.signature, correlationId: first.commandId, commandPayload: first.payload },
    candidates: [] as string[],
    verifies: [] as boolean[],
  };
  for (const candidate of envelopesFromMetadata(metadata.metadata, first.payload)) {
    metadata.candidates.push(signingBytes(candidate).toString('utf8'));
    metadata.verifies.push(verifyCommandSignature(candidate, root.publicKey));
  }

  const resolution = {
    sessionId: 'rec-1',
    agentId: 'alice',
    reviewer: 'bob',
    pause: 1,
    rootCause: 'Über-eager retries after a timeout',
    conditions: [
      { operation: 'probation', parameters: { hours: 24 } },
      { operation: 'set_risk_threshold', parameters: { threshold: 0.65 } },
    ],
    decidedBy: 'dialectic',
    escalation: null,
    decider: null,
  };
  const resolutionBytes = domainSigningBytes(SIGNING_TAGS.resolution, { resolution, signer: 'alice' });
  const login = { aud: 'agora', challenge: 'q9Xh2c0sYw1mXK8bF3n4tA', sub: 'root' };
  const loginBytes = domainSigningBytes(SIGNING_TAGS.login, login);
  const domainTagged = [
    { name: 'resolution signed by the paused agent', tag: SIGNING_TAGS.resolution, signer: 'alice', publicKey: alice.publicKey, value: { resolution, signer: 'alice' }, signedText: resolutionBytes.toString('utf8'), signedBytesBase64url: b64url(resolutionBytes), signature: signBytes(resolutionBytes, alice.secretKey) },
    { name: 'a login: the answer to a gateway challenge (POST /v1/login)', tag: SIGNING_TAGS.login, signer: 'root', publicKey: root.publicKey, value: login, signedText: loginBytes.toString('utf8'), signedBytesBase64url: b64url(loginBytes), signature: signBytes(loginBytes, root.secretKey) },
  ];

  const tampered = { ...envelopes[1]!.envelope, payload: { ...envelopes[1]!.envelope.payload, confidence: 0.86 } };
  const mustFail = [{ name: 'the floats envelope with confidence changed: the signature no longer verifies', publicKey: alice.publicKey, envelope: tampered, signedText: signingBytes(tampered).toString('utf8'), verifies: false }];

  // 2026-01-01T00:00:00Z in seconds: the read tokens' iat.
  const iat = Date.parse(ISSUED_AT) / 1000;
  const readTokenCases: { name: string; key: typeof alice; claims: ReadTokenClaims }[] = [
    { name: 'a read token for five minutes', key: alice, claims: { sub: 'alice', aud: 'agora', iat, exp: iat + 300 } },
    { name: 'with jti and another audience', key: root, claims: { sub: 'root', aud: 'https://agora.example.org', iat, exp: iat + 60, jti: 'r-1' } },
  ];
  const readTokens = readTokenCases.map(({ name, key, claims }) => {
    const token = signReadToken(claims, key.secretKey);
    const [header, body] = token.split('.') as [string, string];
    return { name, signer: key.name, publicKey: key.publicKey, claims, headerJson: Buffer.from(header, 'base64url').toString('utf8'), claimsJson: Buffer.from(body, 'base64url').toString('utf8'), signingInput: `${header}.${body}`, token };
  });

  return {
    description: 'Test vectors of the signing specification (docs/any-language-agents.md, "Signing specification"). Keys are Ed25519 from fixed seeds; every signature is over the UTF-8 of signedText.',
    tags: SIGNING_TAGS,
    keys,
    canonicalJson: canonical,
    envelopes,
    eventMetadata: [metadata],
    domainTagged,
    readTokens,
    mustNotVerify: mustFail,
  };
}
