import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, verifyReadToken } from '@agora/identity';
import { COMMANDS, runCli } from '../src/cli.js';
import type { Io } from '../src/command.js';
import { agentsTable } from '../src/commands/agents.js';
import { eventLine, unknownVersion } from '../src/commands/events.js';
import { readPayload } from '../src/commands/send.js';
import { describeCommandResult } from '../src/gateway-client.js';
import { SseParser } from '@agora/sdk';

/** An Io that records what a command prints; nothing here reaches a network. */
function fakeIo(stdin = '', env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), readStdin: async () => stdin, env };
  return { io, stdout: () => out.join(''), stderr: () => err.join('') };
}

async function cli(argv: string[], stdin = '') {
  const f = fakeIo(stdin);
  const code = await runCli(argv, f.io);
  return { code, stdout: f.stdout(), stderr: f.stderr() };
}

describe('agora help', () => {
  it.each(COMMANDS.map((c) => c.name))('agora %s --help shows usage, options and an example, and exits 0', async (name) => {
    for (const flag of ['--help', '-h']) {
      const { code, stdout, stderr } = await cli([...name.split(' '), flag]);
      expect(code).toBe(0);
      expect(stderr).toBe('');
      expect(stdout).toMatch(new RegExp(`^Usage: agora ${name} `));
      expect(stdout).toContain('\nOptions:\n');
      expect(stdout).toContain('--url <url>');
      expect(stdout).toMatch(/\nExamples?:\n {2}agora /);
    }
    expect((await cli(['help', ...name.split(' ')])).stdout).toMatch(new RegExp(`^Usage: agora ${name} `));
  });

  it('--help wins over anything wrong beside it', async () => {
    expect((await cli(['agents', 'register', '--bogus', '--help'])).code).toBe(0);
  });

  it('lists every command in the main help and each group in its own', async () => {
    for (const argv of [[], ['--help'], ['-h'], ['help']]) {
      const { code, stdout } = await cli(argv);
      expect(code).toBe(0);
      for (const c of COMMANDS) expect(stdout).toContain(`  ${c.name} `);
    }
    const { code, stdout } = await cli(['agents', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: agora agents <command>/);
    expect(stdout).toContain('agents register');
    expect((await cli(['--version'])).stdout).toMatch(/^agora \d+\.\d+\.\d+\n$/);
  });
});

describe('agora usage errors exit 2 with a clear message', () => {
  const cases: [string, string[], RegExp][] = [
    ['an unknown command', ['frobnicate'], /unknown command "frobnicate" \(known: keys, agents, events, chamber, debate, outcome, fleet, setup, projections, send, token, mcp, mcp-proxy, verify-read-models, audit\)/],
    ['an unknown subcommand', ['agents', 'delete'], /unknown command "agents delete" \(known: register, list, disable, enable\)/],
    ['a group without a subcommand', ['agents'], /agora agents needs a command: register, list, disable/],
    ['an option before the command', ['--url', 'http://x', 'agents', 'list'], /unknown option --url \(options go after the command\)/],
    ['an unknown option', ['agents', 'list', '--colour'], /unknown option --colour/],
    ['an unknown short option', ['agents', 'list', '-x'], /unknown option -x/],
    ['an option without its value', ['send', 'X', '{}', '--key'], /option --key needs a value/],
    ['a value given to a flag', ['agents', 'list', '--json=yes'], /option --json takes no value/],
    ['a missing argument', ['send', 'UpdateAgent'], /missing <payload>/],
    ['an extra argument', ['agents', 'list', 'everyone'], /unexpected argument "everyone"/],
    ['a missing required option', ['agents', 'disable', 'alice', '--key', 'k.json'], /--reason is required/],
    ['a trust score out of range', ['agents', 'register', '--key', 'k', '--id', 'a', '--public-key', 'p', '--roles', 'observer', '--trust', '1001'], /--trust must be a whole number from 0 to 1000/],
    ['a trust score that is not a number', ['agents', 'register', '--key', 'k', '--id', 'a', '--public-key', 'p', '--roles', 'observer', '--trust', 'high'], /--trust must be a whole number/],
    ['both key options', ['agents', 'register', '--key', 'k', '--id', 'a', '--public-key', 'p', '--agent-key', 'f', '--roles', 'observer'], /exactly one of --public-key or --agent-key/],
    ['neither key option', ['agents', 'register', '--key', 'k', '--id', 'a', '--roles', 'observer'], /exactly one of --public-key or --agent-key/],
    ['no roles', ['agents', 'register', '--key', 'k', '--id', 'a', '--public-key', 'p'], /--roles is required/],
    ['a bad agent id for a key', ['keys', 'new', '--agent', 'Not Valid'], /--agent "Not Valid"/],
    ['a command type that is not one', ['send', 'register-agent', '{}', '--key', 'k'], /"register-agent" is not a command type/],
    ['a gateway URL that is not one', ['agents', 'list', '--url', 'not a url'], /is not a URL/],
    ['a gateway URL of another scheme', ['agents', 'list', '--url', 'ftp://host'], /must be http:\/\/ or https:\/\//],
    ['a count of zero', ['events', 'tail', '--first', '0'], /--first must be a whole number from 1/],
    ['--after with --from-end', ['events', 'tail', '--after', '5', '--from-end'], /--after or --from-end, not both/],
    ['a question without why', ['chamber', 'ask', 'Should we?', '--key', 'k'], /--why is required/],
    ['a ceiling that is not an amount', ['chamber', 'ask', 'Should we?', '--why', 'w', '--key', 'k', '--ceiling', 'lots'], /--ceiling must be an amount/],
    ['a session to approve missing', ['chamber', 'approve', '--key', 'k'], /missing <sessionId>/],
  ];
  it.each(cases)('%s', async (_what, argv, message) => {
    const { code, stdout, stderr } = await cli(argv);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(message);
    expect(stderr).toMatch(/Run 'agora .*--help' for usage\./);
  });
});

describe('command parts', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'agora-cli-unit-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a payload inline, from @file or from stdin, and wants an object', async () => {
    const { io } = fakeIo('{"from":"stdin"}');
    expect(await readPayload('{"a":1}', io)).toEqual({ a: 1 });
    writeFileSync(join(dir, 'p.json'), '{"from":"file"}');
    expect(await readPayload(`@${join(dir, 'p.json')}`, io)).toEqual({ from: 'file' });
    expect(await readPayload('-', io)).toEqual({ from: 'stdin' });
    await expect(readPayload('[1]', io)).rejects.toThrow(/must be a JSON object/);
    await expect(readPayload('{oops', io)).rejects.toThrow(/not valid JSON/);
    await expect(readPayload(`@${join(dir, 'missing.json')}`, io)).rejects.toThrow(/cannot read .*ENOENT/);
  });

  it('agora token prints a read token of the key file\'s agent that the gateway\'s check accepts', async () => {
    const pair = generateKeyPair();
    writeFileSync(join(dir, 'reader.key.json'), JSON.stringify({ agentId: 'reader', ...pair }));
    const f = fakeIo('', { AGORA_READ_AUDIENCE: 'agora.test' });
    expect(await runCli(['token', '--key', join(dir, 'reader.key.json'), '--lifetime', '60'], f.io)).toBe(0);
    const result = await verifyReadToken(f.stdout().trim(), { audience: 'agora.test', lookup: (id) => (id === 'reader' ? { publicKey: pair.publicKey, status: 'active' } : undefined) });
    expect(result).toMatchObject({ ok: true, claims: { sub: 'reader', aud: 'agora.test' } });
    expect(result.ok && result.claims.exp - result.claims.iat).toBe(60);
    expect((await cli(['token'])).stderr).toMatch(/--key <file>/);
    expect((await cli(['token', '--key', join(dir, 'reader.key.json'), '--lifetime', '301'])).code).toBe(2);
  });

  it('says what a key file problem is, with exit 1', async () => {
    writeFileSync(join(dir, 'bad.key.json'), '{"agentId":"x"}');
    const { code, stderr } = await cli(['send', 'UpdateAgent', '{}', '--key', join(dir, 'bad.key.json'), '--url', 'http://127.0.0.1:9']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: .*bad\.key\.json: the key file has no "secretKey"/);
  });

  it('events tail says when an event arrives at a schema version this agora does not know, and only then', () => {
    const event = (metadata?: Record<string, unknown>, type = 'AgentRegistered') => ({ id: 'e', type, streamId: 'agent-alice', revision: 0, position: '17', data: { agentId: 'alice' }, ...(metadata ? { metadata } : {}) });
    expect(unknownVersion(event({ actor: 'root', schemaVersion: 1 }))).toBeUndefined();
    expect(unknownVersion(event({ actor: 'root', schemaVersion: 2 }))).toBe(
      "AgentRegistered arrives at schema version 2, this agora knows version 1: its data is printed as received, not as version 1 (an agora from the gateway's release reads it)",
    );
    expect(unknownVersion(event({ actor: 'root' }))).toMatch(/^AgentRegistered arrives at schema version none, this agora knows version 1/);
    expect(unknownVersion(event({ actor: 'root' }, 'CommandIdReserved'))).toBeUndefined();
  });

  it('formats events, agents and command results for people', () => {
    expect(eventLine({ id: 'e', type: 'AgentRegistered', streamId: 'agent-alice', revision: 0, position: '17', data: { agentId: 'alice' } })).toBe(
      '17 agent-alice@0 AgentRegistered {"agentId":"alice"}',
    );
    expect(
      agentsTable([
        { agentId: 'alice', displayName: 'Alice', roles: ['executive', 'reviewer'], trustScore: 700, status: 'active' },
        { agentId: 'bob', displayName: 'Bob the Builder', roles: ['observer'], trustScore: 5, status: 'disabled' },
        { agentId: 'cyd', displayName: 'Cyd', roles: ['executive'], trustScore: 500, status: 'active', breaker: { state: 'open' } },
        { agentId: 'dee', displayName: 'Dee', roles: ['executive'], trustScore: 500, status: 'active', breaker: { state: 'closed' } },
      ]),
    ).toBe(
      [
        'ID     NAME             ROLES               TRUST  STATUS',
        'alice  Alice            executive,reviewer  700    active',
        'bob    Bob the Builder  observer            5      disabled',
        'cyd    Cyd              executive           500    paused',
        'dee    Dee              executive           500    active',
        '',
      ].join('\n'),
    );
    expect(describeCommandResult('RegisterAgent', { streamId: 'agent-alice', revision: 0, events: ['AgentRegistered'], duplicate: false })).toBe('RegisterAgent: agent-alice@0 [AgentRegistered]');
    expect(describeCommandResult('RegisterAgent', { streamId: 'agent-alice', revision: 0, events: ['AgentRegistered'], position: '0000000000000007:000000', duplicate: false })).toBe(
      'RegisterAgent: agent-alice@0 [AgentRegistered] at 0000000000000007:000000',
    );
    expect(describeCommandResult('UpdateAgent', { streamId: 'agent-alice', revision: 3, events: [], duplicate: true })).toBe(
      'UpdateAgent: agent-alice@3 nothing to change (already handled: nothing new written)',
    );
  });
});

describe('SseParser', () => {
  it('parses messages split anywhere, with CRLF or LF, skipping comments and data-less blocks', () => {
    const text = ': hello\r\nretry: 2000\r\n\r\nid: 1\nevent: A\ndata: {"n":1}\n\nid: 2\r\nevent: B\r\ndata: line1\r\ndata: line2\r\n\r\n: heartbeat\n\n';
    for (const size of [1, 2, 3, 7, text.length]) {
      const parser = new SseParser();
      const messages = [];
      for (let i = 0; i < text.length; i += size) messages.push(...parser.feed(text.slice(i, i + size)));
      expect(messages).toEqual([
        { id: '1', event: 'A', data: '{"n":1}' },
        { id: '2', event: 'B', data: 'line1\nline2' },
      ]);
      expect(parser.comments).toBe(2);
    }
  });
});
