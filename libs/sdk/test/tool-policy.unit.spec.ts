/** The governed tool calls' policy: structural matching of a call's arguments, the first rule that matches, a bad file refused. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callSummary, toolCallDigest } from '../src/governed.js';
import { matchesPattern, readToolPolicy, ruleFor, ToolPolicy } from '../src/tool-policy.js';

describe('tool policy', () => {
  it('matches scalars by equality and objects key by key, ignoring keys the pattern does not name', () => {
    expect(matchesPattern({ path: '/etc/passwd' }, { path: '/etc/passwd', mode: 'r' })).toBe(true);
    expect(matchesPattern({ path: '/etc/passwd' }, { path: '/etc/passwd2' })).toBe(false);
    expect(matchesPattern({ opts: { force: true } }, { opts: { force: true, depth: 1 } })).toBe(true);
    expect(matchesPattern({ opts: { force: true } }, { opts: 'force' })).toBe(false);
    expect(matchesPattern([1, 2], [1, 2])).toBe(true);
    expect(matchesPattern([1, 2], [1, 2, 3])).toBe(false);
  });

  it('has operators for arrays, sets, prefixes, presence, negation and bounds', () => {
    const entities = [{ name: 'a', entityType: 'note' }, { name: 'b', entityType: 'credential' }];
    expect(matchesPattern({ $any: { entityType: 'credential' } }, entities)).toBe(true);
    expect(matchesPattern({ $all: { entityType: 'credential' } }, entities)).toBe(false);
    expect(matchesPattern({ env: { $in: ['prod', 'production'] } }, { env: 'prod' })).toBe(true);
    expect(matchesPattern({ path: { $prefix: '/etc/' } }, { path: '/etc/shadow' })).toBe(true);
    expect(matchesPattern({ path: { $prefix: '/etc/' } }, { path: '/home/etc/' })).toBe(false);
    expect(matchesPattern({ force: { $exists: true } }, { force: false })).toBe(true);
    expect(matchesPattern({ force: { $exists: false } }, { force: false })).toBe(false);
    expect(matchesPattern({ force: { $exists: false } }, {})).toBe(true);
    expect(matchesPattern({ env: { $not: 'staging' } }, { env: 'prod' })).toBe(true);
    expect(matchesPattern({ amount: { $gte: 1000 } }, { amount: 1000 })).toBe(true);
    expect(matchesPattern({ amount: { $lte: 10 } }, { amount: '5' })).toBe(false);
    // A structural match is not fooled by the same words elsewhere in the text.
    expect(matchesPattern({ env: 'prod' }, { note: '"env":"prod"' })).toBe(false);
  });

  it('takes the first matching rule by server, tool and arguments; nothing matches: undefined', () => {
    const policy = ToolPolicy.parse({
      rules: [
        { server: 'fs', tool: 'write_file', arguments: { path: { $prefix: '/etc/' } }, decision: 'deny' },
        { server: 'fs', tool: 'write_file', decision: 'vote', riskLevel: 'medium' },
        { tool: '*', arguments: { dryRun: false }, decision: 'vote' },
      ],
    });
    expect(ruleFor(policy, { server: 'fs', tool: 'write_file', arguments: { path: '/etc/hosts' } })?.decision).toBe('deny');
    expect(ruleFor(policy, { server: 'fs', tool: 'write_file', arguments: { path: '/tmp/x' } })).toMatchObject({ decision: 'vote', riskLevel: 'medium' });
    expect(ruleFor(policy, { server: 'db', tool: 'drop', arguments: { dryRun: false } })).toMatchObject({ decision: 'vote', riskLevel: 'high' });
    expect(ruleFor(policy, { server: 'db', tool: 'drop', arguments: { dryRun: true } })).toBeUndefined();
  });

  it('refuses a policy file with an unknown field, decision or operator, saying where', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agora-policy-'));
    const write = (policy: unknown) => {
      const file = join(dir, 'policy.json');
      writeFileSync(file, JSON.stringify(policy));
      return file;
    };
    expect(() => readToolPolicy(write({ rules: [{ tool: 'x', decision: 'maybe' }] }))).toThrow(/decision/);
    expect(() => readToolPolicy(write({ rules: [{ tool: 'x', decision: 'vote', when: {} }] }))).toThrow(/when/);
    expect(() => readToolPolicy(write({ rules: [{ tool: 'x', decision: 'vote', arguments: { path: { $regex: '.*' } } }] }))).toThrow(/rules\[0\]\.arguments\.path: unknown operator \$regex/);
    expect(readToolPolicy(write({ server: 'fs', rules: [{ tool: 'x', decision: 'vote' }] })).rules[0]).toMatchObject({ riskLevel: 'high' });
  });

  it('reads a policy written in YAML (.yaml or .yml), checked by the same schema', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agora-policy-'));
    const file = join(dir, 'memory.policy.yaml');
    writeFileSync(file, ['server: memory', 'rules:', '  - tool: create_entities', '    arguments: { entities: { $any: { entityType: credential } } }', '    decision: vote', '    riskLevel: critical', '  - tool: delete_entities', '    decision: deny', ''].join('\n'));
    const policy = readToolPolicy(file);
    expect(ruleFor(policy, { server: 'memory', tool: 'create_entities', arguments: { entities: [{ entityType: 'credential' }] } })).toMatchObject({ decision: 'vote', riskLevel: 'critical' });
    expect(ruleFor(policy, { server: 'memory', tool: 'delete_entities', arguments: {} })?.decision).toBe('deny');
    writeFileSync(join(dir, 'bad.yml'), 'rules:\n  - tool: x\n    decision: maybe\n');
    expect(() => readToolPolicy(join(dir, 'bad.yml'))).toThrow(/decision/);
  });
});

describe('the call a decision is bound to', () => {
  const call = { server: 'memory', tool: 'create_entities', arguments: { b: 1, a: [{ y: 2, x: 1 }] }, caller: 'deployer' };
  it('digests the canonical JSON of server, tool, arguments and caller: key order does not matter, every part does', () => {
    const digest = toolCallDigest(call);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(toolCallDigest({ ...call, arguments: { a: [{ x: 1, y: 2 }], b: 1 } })).toBe(digest);
    expect(toolCallDigest({ ...call, arguments: { ...call.arguments, b: 2 } })).not.toBe(digest);
    expect(toolCallDigest({ ...call, tool: 'delete_entities' })).not.toBe(digest);
    expect(toolCallDigest({ ...call, caller: 'other' })).not.toBe(digest);
    expect(toolCallDigest({ ...call, server: 'other' })).not.toBe(digest);
  });

  it('shows the validators the arguments, cutting long ones but never the digest', () => {
    const rule = { tool: 'create_entities', decision: 'vote', riskLevel: 'high' } as const;
    expect(callSummary(call, 'abc', rule)).toContain('arguments: {"a":[{"x":1,"y":2}],"b":1}');
    const long = callSummary({ ...call, arguments: { blob: 'z'.repeat(10_000) } }, 'abc', rule);
    expect(long.length).toBeLessThanOrEqual(5000);
    expect(long).toContain('sha256:abc');
    expect(long).toMatch(/\(cut; the digest covers them all\)$/);
  });
});
