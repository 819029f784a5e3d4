// The generated documents, read by standard tools: the AsyncAPI parser, an OpenAPI 3.1 validator, and
// a JSON Schema 2020-12 validator (ajv) that refuses what the services refuse.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DiagnosticSeverity, Parser } from '@asyncapi/parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { SCHEMA_FORMAT } from '@agora/contracts';
import { GENERATED_DIR } from '../src/generated.js';

const read = (path: string) => readFileSync(join(GENERATED_DIR, path), 'utf8');
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

function jsonSchemaValidator(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv;
}

describe('the AsyncAPI document', () => {
  const doc = JSON.parse(read('asyncapi.json')) as { components: { messages: Record<string, { payload: { schemaFormat: string; schema: object }; headers?: { schema: { properties: object } } }> }; operations: Record<string, Record<string, unknown>> };

  it('declares JSON Schema 2020-12 on every message', () => {
    const messages = Object.entries(doc.components.messages);
    expect(messages.length).toBeGreaterThan(100);
    for (const [name, m] of messages) expect([name, m.payload.schemaFormat]).toEqual([name, SCHEMA_FORMAT]);
  });

  it('is valid for the AsyncAPI parser, its schemas compiled as JSON Schema 2020-12', async () => {
    const ajv = jsonSchemaValidator();
    const parser = new Parser();
    let compiled = 0;
    parser.registerSchemaParser({
      getMimeTypes: () => [SCHEMA_FORMAT],
      validate: (input) => {
        try {
          ajv.compile(input.data as object);
          return [];
        } catch (error) {
          return [{ message: (error as Error).message, path: input.path }];
        }
      },
      // Every schema the parser meets goes through here: compiling it checks it is JSON Schema 2020-12.
      parse: (input) => {
        ajv.compile(input.data as object);
        compiled++;
        return input.data as never;
      },
    });
    const { document, diagnostics } = await parser.parse(read('asyncapi.json'));
    const errors = diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error);
    expect(errors.map((d) => `${d.path.join('.')}: ${d.message}`)).toEqual([]);
    expect(document).toBeDefined();
    expect(document!.operations().length).toBe(Object.keys(doc.operations).length);
    expect(compiled).toBeGreaterThan(100);
  }, 120_000);

  it('names the queue group that answers each query (figures from projections), its HTTP route, and the event headers', () => {
    expect(doc.operations['qry_tribunal_stats']!['x-agora-queue-group']).toBe('projections');
    expect(doc.operations['qry_voting_sessions_stats']!['x-agora-queue-group']).toBe('projections');
    expect(doc.operations['qry_dialectic_collusion']!['x-agora-queue-group']).toBe('projections');
    expect(doc.operations['qry_tribunal_assignments_list']!['x-agora-queue-group']).toBe('tribunal');
    expect(doc.operations['qry_proposal_proposals_get']!['x-agora-http']).toEqual({ method: 'GET', path: '/v1/proposal/proposals/{proposalId}', pathParams: ['proposalId'], queryParams: [] });
    expect(Object.keys(doc.components.messages['ProposalSubmitted']!.headers!.schema.properties)).toContain('Agora-Event-Id');
  });
});

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 for an OpenAPI validator', async () => {
    const result = await new Validator().validate(JSON.parse(read('openapi.json')) as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });
});

describe('the JSON Schemas, for a standard validator', () => {
  const ajv = jsonSchemaValidator();
  const schema = (path: string) => ajv.compile(JSON.parse(read(`json-schema/${path}`)) as object);
  const envelope = (type: string, payload: Record<string, unknown>) => ({ commandId: '00000000-0000-4000-8000-000000000001', type, actor: 'alice', issuedAt: '2026-01-01T00:00:00.000Z', payload, signature: 'A'.repeat(86) });
  const review = { proposalId: 'p1', round: 1, constitution: 'risk', reasoning: 'because' };

  it('SubmitReview: an objection needs a constraint, a scenario, and a revision or a reason to reject; an approval carries none', () => {
    const validate = schema('commands/SubmitReview.json');
    const ok = (payload: Record<string, unknown>) => validate(envelope('SubmitReview', payload));
    expect(ok({ ...review, verdict: 'approve' })).toBe(true);
    expect(ok({ ...review, verdict: 'object', constraint: 'c', scenario: 's', suggestedRevision: 'r' })).toBe(true);
    expect(ok({ ...review, verdict: 'object', constraint: 'c', scenario: 's', rejectReason: 'r' })).toBe(true);
    expect(ok({ ...review, verdict: 'object' })).toBe(false);
    expect(ok({ ...review, verdict: 'object', constraint: 'c', scenario: 's' })).toBe(false);
    expect(ok({ ...review, verdict: 'object', constraint: '  ', scenario: 's', suggestedRevision: 'r' })).toBe(false);
    expect(ok({ ...review, verdict: 'approve', constraint: 'c' })).toBe(false);
    expect(ok({ ...review, verdict: 'approve', constraint: ' ' })).toBe(true);
  });

  it('RecordTieBreak, DecideRecovery and UpdateVotingConfig state their conditional requirements', () => {
    const tie = schema('commands/RecordTieBreak.json');
    const base = { sessionId: 's1', escalation: 1, reasoning: 'r' };
    expect(tie(envelope('RecordTieBreak', { ...base, side: 'neither' }))).toBe(true);
    expect(tie(envelope('RecordTieBreak', { ...base, side: 'agent' }))).toBe(false);
    const decide = schema('commands/DecideRecovery.json');
    expect(decide(envelope('DecideRecovery', { sessionId: 's1', decision: 'stay_paused', reasoning: 'r' }))).toBe(true);
    expect(decide(envelope('DecideRecovery', { sessionId: 's1', decision: 'resume', reasoning: 'r' }))).toBe(false);
    const config = schema('commands/UpdateVotingConfig.json');
    expect(config(envelope('UpdateVotingConfig', {}))).toBe(false);
  });

  it('the dialectic collusion reply (prefixItems) and the event metadata read as 2020-12', () => {
    const collusion = schema('queries/dialectic.collusion.result.json');
    expect(collusion({ flags: [{ agents: ['alice', 'bob'], reviews: 6, firstToSecond: 3, secondToFirst: 3 }] })).toBe(true);
    expect(collusion({ flags: [{ agents: ['alice', 'bob', 'carol'], reviews: 6, firstToSecond: 3, secondToFirst: 3 }] })).toBe(false);
    // As the AsyncAPI document carries it (the reply message's payload, schemaFormat 2020-12).
    const reply = (JSON.parse(read('asyncapi.json')) as { components: { messages: Record<string, { payload: { schema: object } }> } }).components.messages['Query_dialectic_collusionReply']!;
    expect(ajv.compile(reply.payload.schema)({ ok: true, result: { flags: [{ agents: ['alice', 'bob'], reviews: 6, firstToSecond: 3, secondToFirst: 3 }] } })).toBe(true);
    const metadata = schema('EventMetadata.json');
    expect(metadata({ actor: 'alice', commandId: 'c', commandType: 'SubmitProposal', issuedAt: '2026-01-01T00:00:00.000Z', signature: 'A'.repeat(86), correlationId: 'c', commandPayload: { a: 1 } })).toBe(true);
    expect(metadata({ actor: 'alice', commandId: 'c', commandType: 'SubmitProposal', issuedAt: '2026-01-01T00:00:00.000Z', unknown: 1 })).toBe(false);
  });
});
