import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as contracts from '@agora/contracts';
import { READ_TOKEN, commands, queries } from '@agora/contracts';
import { generateKeyPair, verifyCommandSignature, verifyReadToken } from '@agora/identity';
import { commandDefinition, namedQueries, queryDefinition, queryUrl, readToken, signCommand, uuidV5, type CommandName, type QueryName, type QueryResult } from '../src/index.js';

describe('the SDK catalog: names and types from the contracts', () => {
  it('names every command of the catalog by its type, exported under that name (so CommandName covers it)', () => {
    for (const definition of commands) {
      expect((contracts as Record<string, unknown>)[definition.type]).toBe(definition);
      expect(commandDefinition(definition.type)).toBe(definition);
    }
  });

  it('names every query of the catalog once', () => {
    const named = new Map(namedQueries().map(([name, definition]) => [definition, name]));
    for (const definition of queries) {
      const name = named.get(definition);
      expect(name).toBeDefined();
      expect(queryDefinition(name as string)).toBe(definition);
    }
    expect(named.size).toBe(queries.length);
  });

  it('refuses names the contracts do not define', () => {
    expect(() => commandDefinition('LaunchMissiles')).toThrow('unknown command type "LaunchMissiles"');
    expect(() => queryDefinition('GetEverything')).toThrow('unknown query "GetEverything"');
  });

  it('types names and results at compile time', () => {
    const command: CommandName = 'SubmitProposal';
    const query: QueryName = 'GetProposal';
    // @ts-expect-error not a command type
    const notACommand: CommandName = 'LaunchMissiles';
    const status: QueryResult<'GetProposal'>['status'] = 'approved';
    // @ts-expect-error not a proposal status
    const badStatus: QueryResult<'GetProposal'>['status'] = 'maybe';
    expect([command, query, notACommand, status, badStatus]).toHaveLength(5);
  });
});

describe('queryUrl', () => {
  it('puts path parameters in the path and the rest in the query string', () => {
    expect(queryUrl('http://gw:8080', queryDefinition('GetProposal'), { proposalId: 'space os' }).href).toBe('http://gw:8080/v1/proposal/proposals/space%20os');
    const list = queryUrl('http://gw:8080', queryDefinition('ListProposals'), { status: 'approved', limit: 5, minPosition: '42' });
    expect(list.pathname).toBe('/v1/proposal/proposals');
    expect(Object.fromEntries(list.searchParams)).toEqual({ status: 'approved', limit: '5', minPosition: '42' });
  });

  it('says which path parameter is missing', () => {
    expect(() => queryUrl('http://gw', queryDefinition('GetProposal'), {})).toThrow('agora.qry.proposal.proposals.get needs "proposalId"');
  });
});

describe('uuidV5', () => {
  it('matches the RFC 9562 example (www.example.com in the DNS namespace)', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('is a valid command id, the same for the same name, another for another', () => {
    const id = uuidV5('reviewer:harbinger:event-1:0');
    expect(contracts.CommandEnvelope.shape.commandId.safeParse(id).success).toBe(true);
    expect(uuidV5('reviewer:harbinger:event-1:0')).toBe(id);
    expect(uuidV5('reviewer:heretic:event-1:0')).not.toBe(id);
  });
});

describe('signing for other clients: signCommand and readToken', () => {
  const key = generateKeyPair();
  let dir: string;
  let keyFile: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agora-sdk-signing-'));
    keyFile = join(dir, 'envoy.key.json');
    writeFileSync(keyFile, JSON.stringify({ agentId: 'envoy', ...key }), { mode: 0o600 });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("signs an envelope with the key file's agent as actor, which verifies under its public key", () => {
    const payload = { proposalId: 'p-signed', title: 'Onboarding', body: 'Add tooltips', problem: 'Users drop off' };
    const envelope = signCommand({ type: 'SubmitProposal', payload, signer: { keyFile }, commandId: 'c-1', correlationId: 'corr-1' });
    expect(envelope).toMatchObject({ type: 'SubmitProposal', actor: 'envoy', commandId: 'c-1', correlationId: 'corr-1', payload });
    expect(verifyCommandSignature(envelope, key.publicKey)).toBe(true);
    expect(verifyCommandSignature({ ...envelope, payload: { ...payload, title: 'Other' } }, key.publicKey)).toBe(false);
    expect(verifyCommandSignature(envelope, generateKeyPair().publicKey)).toBe(false);
  });

  it('signs an envelope drafted elsewhere as it is: its commandId and issuedAt kept', () => {
    const drafted = { commandId: 'c-drafted', type: 'SubmitProposal' as const, actor: 'envoy', issuedAt: '2026-12-07T10:00:00.000Z', payload: { proposalId: 'p-drafted', title: 'T', body: 'B', problem: 'P' } };
    const envelope = signCommand({ ...drafted, signer: { keyFile } });
    expect(envelope).toEqual({ ...drafted, signature: expect.any(String) });
    expect(verifyCommandSignature(envelope, key.publicKey)).toBe(true);
  });

  it('refuses an unknown command type and a signer without a usable key', () => {
    expect(() => signCommand({ type: 'LaunchMissiles' as CommandName, payload: {} as never, signer: { keyFile } })).toThrow('unknown command type "LaunchMissiles"');
    expect(() => readToken({ keyFile: join(dir, 'missing.key.json') })).toThrow(/ENOENT/);
    expect(() => readToken({ secretKey: 'not-a-key', agentId: 'envoy' })).toThrow();
  });

  it("mints a read token of the signer's agent that the gateway's check accepts, for the audience and lifetime asked", async () => {
    const lookup = (agentId: string) => (agentId === 'envoy' ? { publicKey: key.publicKey, status: 'active' as const } : undefined);
    const token = readToken({ keyFile });
    expect(await verifyReadToken(token, { audience: READ_TOKEN.defaultAudience, lookup })).toMatchObject({ ok: true, claims: { sub: 'envoy', aud: READ_TOKEN.defaultAudience } });
    const own = readToken({ secretKey: key.secretKey, agentId: 'envoy' }, { audience: 'gateway-eu', lifetimeSeconds: 60 });
    const checked = await verifyReadToken(own, { audience: 'gateway-eu', lookup });
    expect(checked).toMatchObject({ ok: true, claims: { sub: 'envoy', aud: 'gateway-eu' } });
    expect(checked.ok && checked.claims.exp - checked.claims.iat).toBe(60);
    expect(await verifyReadToken(own, { audience: READ_TOKEN.defaultAudience, lookup })).toMatchObject({ ok: false, code: 'wrong_audience' });
  });
});
