import { readFileSync } from 'node:fs';
import { EVENT_VISIBILITY, events, namedAt, queries, queryAccess, QUERY_VISIBILITY, readerOf, visibilityTableMarkdown } from '../src/index.js';

describe('the visibility table', () => {
  it('has one row for every query of the catalog, and no other: each query says who reads it', () => {
    expect(queries.filter((q) => q.visibility === undefined).map((q) => q.subject)).toEqual([]);
    const names = queries.map((q) => `${q.service}.${q.name}`).sort();
    expect(QUERY_VISIBILITY.map((r) => r.query).sort()).toEqual(names);
  });

  it('says what agents read of every stream category that has events', () => {
    const categories = [...new Set(events.map((e) => e.category))].sort();
    expect(Object.keys(EVENT_VISIBILITY).sort()).toEqual(categories);
  });

  it('names own-list parameters that the query takes', () => {
    for (const row of QUERY_VISIBILITY) {
      if (row.agent.read !== 'own') continue;
      const query = queries.find((q) => `${q.service}.${q.name}` === row.query)!;
      expect(Object.keys((query.params as unknown as { shape: Record<string, unknown> }).shape)).toContain(row.agent.param);
    }
  });

  it('gives operators and auditors everything, observers the figures, agents what concerns them', () => {
    const operator = readerOf('root', ['operator']);
    const auditor = readerOf('aud', ['auditor']);
    const observer = readerOf('eye', ['observer']);
    const agent = readerOf('alice', ['executive']);
    const nobody = readerOf('new', []);
    for (const reader of [operator, auditor]) for (const row of QUERY_VISIBILITY) expect(queryAccess(reader, row.query)).toEqual({ read: 'all' });
    expect(queryAccess(observer, 'tribunal.stats')).toEqual({ read: 'all' });
    expect(queryAccess(observer, 'proposal.proposals.list')).toEqual({ read: 'none' });
    expect(queryAccess(agent, 'proposal.proposals.list')).toEqual({ read: 'own', param: 'proposer' });
    expect(queryAccess(agent, 'dialectic.collusion')).toEqual({ read: 'none' });
    expect(queryAccess(nobody, 'registry.agents.list')).toEqual({ read: 'all' });
    expect(queryAccess(agent, 'no.such.query')).toEqual({ read: 'none' });
  });

  it('finds agent ids at dot paths, through arrays', () => {
    const view = { proposer: 'alice', rounds: [{ assignments: [{ reviewer: 'bob' }, { reviewer: 'carol' }] }, { assignments: [] }], summary: { proposedBy: 'dan' } };
    expect([...namedAt(view, ['proposer', 'rounds.assignments.reviewer', 'summary.proposedBy', 'missing.path'])].sort()).toEqual(['alice', 'bob', 'carol', 'dan']);
  });

  it('is in docs/security.md, as generated', () => {
    expect(readFileSync(new URL('../../../docs/security.md', import.meta.url), 'utf8')).toContain(visibilityTableMarkdown());
  });
});
