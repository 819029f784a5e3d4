import { readFileSync } from 'node:fs';
import { authorizationTable, authorizationTableMarkdown, authorizeCommand, commands, isServiceOnly, Role, SERVICE_NAMES } from '../src/index.js';

const AGENT_ROLES = Role.options;

describe('the authorization table', () => {
  it.each(commands.map((c) => [c.type, c] as const))('%s: the right sender is allowed, every wrong one refused', (_type, definition) => {
    const issuers = definition.issuers ?? [];
    // Services: only the declared issuers, on their own behalf.
    for (const service of SERVICE_NAMES) {
      const answer = authorizeCommand(definition.type, { actor: `service:${service}`, roles: ['service'] });
      if (issuers.includes(service)) expect(answer).toMatchObject({ allowed: true, as: 'service', service });
      else expect(answer).toMatchObject({ allowed: false, code: 'forbidden', reason: expect.stringContaining(`service:${service} does not issue ${definition.type}`) });
    }
    // Agents: a holder of one of its roles, never for a service-only command, whatever its roles (operators included).
    for (const role of AGENT_ROLES) {
      const answer = authorizeCommand(definition.type, { actor: 'someone', roles: [role] });
      if (isServiceOnly(definition)) expect(answer).toMatchObject({ allowed: false, code: 'service_only' });
      else if (definition.roles.includes(role)) expect(answer).toMatchObject({ allowed: true, as: 'role', roles: [role], ...(definition.relation ? { relation: definition.relation } : {}) });
      else expect(answer).toMatchObject({ allowed: false, code: 'forbidden' });
    }
    expect(authorizeCommand(definition.type, { actor: 'someone', roles: [...AGENT_ROLES] }).allowed).toBe(!isServiceOnly(definition));
    // An agent id that pretends to be a service: the roles it claims do not make it one.
    expect(authorizeCommand(definition.type, { actor: 'service:nobody', roles: ['service', 'operator'] })).toMatchObject({ allowed: false, code: 'forbidden' });
  });

  it('gives the auditor no command: it reads everything and writes nothing (docs/security-reads.md)', () => {
    expect(commands.filter((c) => c.roles.includes('auditor')).map((c) => c.type)).toEqual([]);
    for (const definition of commands) expect(authorizeCommand(definition.type, { actor: 'aud', roles: ['auditor'] }).allowed).toBe(false);
    expect(authorizeCommand('ReserveModelCall', { actor: 'aud', roles: ['auditor'] })).toMatchObject({ allowed: false, code: 'forbidden' });
  });

  it('authorizes an older commit under the roles of its rules: an auditor reserved model calls before rules 3', () => {
    for (const type of ['ReserveModelCall', 'RecordModelCallOutcome']) {
      expect(authorizeCommand(type, { actor: 'aud', roles: ['auditor'], rules: 2 })).toMatchObject({ allowed: true, roles: ['auditor'] });
      expect(authorizeCommand(type, { actor: 'aud', roles: ['auditor'], rules: 3 })).toMatchObject({ allowed: false, code: 'forbidden' });
    }
    // Commands whose roles never changed answer the same under any rules.
    expect(authorizeCommand('SubmitProposal', { actor: 'aud', roles: ['auditor'], rules: 1 })).toMatchObject({ allowed: false, code: 'forbidden' });
  });

  it('names an unknown command type', () => {
    expect(authorizeCommand('MintCoins', { actor: 'root', roles: ['operator'] })).toMatchObject({ allowed: false, code: 'invalid_command' });
  });

  it('declares the service-only commands of each service', () => {
    const serviceOnly = Object.fromEntries(SERVICE_NAMES.map((s) => [s, authorizationTable().filter((r) => r.roles.length === 0 && r.issuers.includes(s)).map((r) => r.type).sort()]));
    expect(serviceOnly).toMatchObject({
      tribunal: ['ExpireReviewRound', 'OpenReviewRound'],
      voting: ['ExpireVotingSession'],
      registry: ['AdjustTrust', 'RecordSettings', 'ResumeAgent'],
      dialectic: ['AssignAuditor', 'AssignTieBreaker', 'ExpireDialecticPhase', 'OpenRecovery', 'RecordQuorumResult', 'RecordRelapse', 'RecordSettings'],
      // Each service that reads a setting records it.
      proposal: ['RecordSettings'],
    });
  });

  it('is the table in docs/security.md', () => {
    const doc = readFileSync(new URL('../../../docs/security.md', import.meta.url), 'utf8');
    expect(doc).toContain(authorizationTableMarkdown());
  });

  it('refuses the role "service" to agents at the schema, saying why', () => {
    const parsed = Role.safeParse('service');
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(/belongs to Agora's own services/);
  });
});
