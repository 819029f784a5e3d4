import { READ_TOKEN } from '@agora/contracts';
import { generateKeyPair, mintReadToken, parseReadToken, signReadToken, verifyReadToken } from '../src/index.js';

describe('read tokens', () => {
  const alice = generateKeyPair();
  const mallory = generateKeyPair();
  const now = new Date('2026-03-01T12:00:00.000Z');
  const t = now.getTime() / 1000;
  const directory = new Map([
    ['alice', { publicKey: alice.publicKey, status: 'active' as const }],
    ['dora', { publicKey: mallory.publicKey, status: 'disabled' as const }],
  ]);
  const verify = (token: string, at = now) => verifyReadToken(token, { audience: 'agora', lookup: (id) => directory.get(id), now: at });

  it('a minted token verifies and names its reader, for the longest lifetime by default', async () => {
    const token = mintReadToken({ agentId: 'alice', secretKey: alice.secretKey, now });
    const result = await verify(token);
    expect(result).toEqual({ ok: true, claims: { sub: 'alice', aud: 'agora', iat: t, exp: t + READ_TOKEN.maxLifetimeSeconds } });
    // Valid until exp plus the clock skew, not after.
    expect((await verify(token, new Date((t + 300 + 60) * 1000))).ok).toBe(true);
    expect(await verify(token, new Date((t + 300 + 61) * 1000))).toMatchObject({ ok: false, code: 'token_expired' });
  });

  it('refuses each fault with its own code', async () => {
    const claims = { sub: 'alice', aud: 'agora', iat: t, exp: t + 60 };
    const cases: [string, string][] = [
      ['garbage', 'invalid_token'],
      [signReadToken(claims, alice.secretKey).replace(/^[^.]+/, Buffer.from('{"alg":"none"}').toString('base64url')), 'invalid_token'],
      [signReadToken({ ...claims, sub: 'nobody' }, alice.secretKey), 'unknown_actor'],
      [signReadToken(claims, mallory.secretKey), 'bad_signature'],
      [signReadToken({ ...claims, sub: 'dora' }, mallory.secretKey), 'actor_disabled'],
      [signReadToken({ ...claims, aud: 'elsewhere' }, alice.secretKey), 'wrong_audience'],
      [signReadToken({ ...claims, exp: t + 301 }, alice.secretKey), 'token_lifetime_too_long'],
      [signReadToken({ ...claims, exp: t }, alice.secretKey), 'token_lifetime_too_long'],
      [signReadToken({ ...claims, iat: t + 61, exp: t + 120 }, alice.secretKey), 'token_not_yet_valid'],
      [signReadToken({ ...claims, iat: t - 200, exp: t - 61 }, alice.secretKey), 'token_expired'],
    ];
    for (const [token, code] of cases) expect(await verify(token)).toMatchObject({ ok: false, code });
  });

  it('a changed claim breaks the signature', async () => {
    const token = signReadToken({ sub: 'alice', aud: 'agora', iat: t, exp: t + 60 }, alice.secretKey);
    const [header, , signature] = token.split('.');
    const forged = `${header}.${Buffer.from('{"aud":"agora","exp":1893456000,"iat":1893455900,"sub":"alice"}').toString('base64url')}.${signature}`;
    expect(await verify(forged)).toMatchObject({ ok: false, code: 'bad_signature' });
  });

  it('parses the claims, jti included, and refuses a lifetime the gateway would not take when minting', () => {
    const parsed = parseReadToken(signReadToken({ sub: 'alice', aud: 'a', iat: 1, exp: 2, jti: 'x' }, alice.secretKey));
    expect(parsed).toMatchObject({ claims: { sub: 'alice', aud: 'a', iat: 1, exp: 2, jti: 'x' } });
    expect(() => mintReadToken({ agentId: 'alice', secretKey: alice.secretKey, lifetimeSeconds: 301 })).toThrow(RangeError);
  });
});
