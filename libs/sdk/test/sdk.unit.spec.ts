import * as contracts from '@agora/contracts';
import { commands, queries } from '@agora/contracts';
import { commandDefinition, namedQueries, queryDefinition, queryUrl, uuidV5, type CommandName, type QueryName, type QueryResult } from '../src/index.js';

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
