// Who reads, and what of the event log: the token's place in a request, the AGORA_READS setting,
// and the parties of a stream as the gateway learns them from a real (embedded) store.
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readerOf } from '@agora/contracts';
import { openEventStore, type EventStore, type RecordedEvent } from '@agora/eventstore';
import { ConfigError } from '@agora/runtime';
import { readAccessFromEnv, ReadAccess, tokenOf } from '../src/read-auth.js';
import { eventViewFor, metadataFrame, StreamParties } from '../src/read-visibility.js';
import { sourceOf } from '../src/sessions.js';

const request = (url: string, headers: Record<string, string> = {}) => ({ url, headers }) as unknown as IncomingMessage;

describe('read access settings and tokens', () => {
  it('AGORA_READS is closed by default or open when said, the audience defaults to agora, AGORA_SESSION_SECONDS is a positive whole number', () => {
    expect(readAccessFromEnv({})).toEqual({ mode: 'closed', audience: 'agora' });
    expect(readAccessFromEnv({ AGORA_READS: '' })).toEqual({ mode: 'closed', audience: 'agora' });
    expect(readAccessFromEnv({ AGORA_READS: 'open' })).toEqual({ mode: 'open', audience: 'agora' });
    expect(readAccessFromEnv({ AGORA_READS: 'closed', AGORA_READ_AUDIENCE: 'prod' })).toEqual({ mode: 'closed', audience: 'prod' });
    expect(() => readAccessFromEnv({ AGORA_READS: 'shut' })).toThrow(ConfigError);
    expect(readAccessFromEnv({ AGORA_READS: 'closed', AGORA_SESSION_SECONDS: '600' })).toEqual({ mode: 'closed', audience: 'agora', sessions: { sessionSeconds: 600 } });
    for (const bad of ['0', '-5', '15m', '1.5']) expect(() => readAccessFromEnv({ AGORA_SESSION_SECONDS: bad })).toThrow(ConfigError);
    expect(() => new ReadAccess({ mode: 'closed' })).toThrow(/agent directory/);
  });

  it('the bounds of the console logins come from their variables, positive whole numbers', () => {
    const env = { AGORA_CONSOLE_SESSIONS_PER_AGENT: '2', AGORA_CONSOLE_SESSIONS_MAX: '50', AGORA_LOGIN_CHALLENGES_PER_SOURCE: '3', AGORA_LOGIN_CHALLENGES_MAX: '40' };
    expect(readAccessFromEnv(env)).toEqual({ mode: 'closed', audience: 'agora', sessions: { sessionsPerAgent: 2, maxSessions: 50, challengesPerSource: 3, maxChallenges: 40 } });
    for (const name of Object.keys(env)) expect(() => readAccessFromEnv({ [name]: '0' })).toThrow(new RegExp(`^${name}="0" must be a positive whole number`));
  });

  it('counts challenges by source: an IPv4 address (also IPv4-mapped), an IPv6 address by its /64', () => {
    const from = (remoteAddress: string) => sourceOf({ socket: { remoteAddress } } as unknown as IncomingMessage);
    expect(from('203.0.113.7')).toBe('203.0.113.7');
    expect(from('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(from('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(from('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(from('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(from('::1')).toBe('0:0:0:0::/64');
  });

  it('takes the token from the Bearer header, else from ?access_token=', () => {
    expect(tokenOf(request('/v1/events', { authorization: 'Bearer a.b.c' }))).toBe('a.b.c');
    expect(tokenOf(request('/v1/events?access_token=x.y.z'))).toBe('x.y.z');
    expect(tokenOf(request('/v1/events'))).toBeUndefined();
    expect(() => tokenOf(request('/v1/events', { authorization: 'Basic dXNlcjpwYXNz' }))).toThrow(/Bearer/);
  });

  it('with reads open, nobody is asked for a token', async () => {
    expect(await new ReadAccess().reader(request('/v1/events'))).toBeUndefined();
  });
});

describe('what a reader sees of the events of a stream', () => {
  let dir: string;
  let store: EventStore;
  let events: RecordedEvent[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agora-read-access-'));
    store = await openEventStore({ kind: 'embedded', directory: dir });
    await store.append('proposal-p1', [{ type: 'ProposalSubmitted', data: { proposalId: 'p1', proposer: 'alice', title: 'secret plan' }, metadata: { actor: 'alice', commandPayload: { title: 'secret plan' } } }], 'no_stream');
    await store.append('proposal-p1', [{ type: 'ReviewRoundOpened', data: { proposalId: 'p1', assignments: [{ constitution: 'risk', reviewer: 'rex' }] }, metadata: { actor: 'service:tribunal' } }], 0);
    events = await store.readStream('proposal-p1');
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a reviewer assigned later reads the whole stream, from its first event; another agent none of it', async () => {
    const parties = new StreamParties(store);
    const rex = eventViewFor(readerOf('rex', ['reviewer']), parties)!;
    const bob = eventViewFor(readerOf('bob', ['executive']), parties)!;
    await rex.prepare([events[0]!]);
    expect(events.map((e) => rex.sight(e))).toEqual(['full', 'full']);
    expect(events.map((e) => bob.sight(e))).toEqual(['none', 'none']);
    expect(eventViewFor(readerOf('root', ['operator']), parties)).toBeUndefined();
  });

  it('an observer sees metadata only: no data, no payload the metadata copies', async () => {
    const eye = eventViewFor(readerOf('eye', ['observer']), new StreamParties(store))!;
    expect(eye.sight(events[0]!)).toBe('metadata');
    const frame = metadataFrame(events[0]!);
    expect(frame).toContain('"actor":"alice"');
    expect(frame).not.toContain('secret plan');
  });
});
