import { commands, events, queries } from '../src/catalog.js';
import { defineCommand, defineQuery } from '../src/define.js';
import { openApiDocument, openApiPath, pathParamsOf } from '../src/openapi.js';
import { z } from 'zod';

type Doc = {
  openapi: string;
  servers?: { url: string }[];
  paths: Record<string, Record<string, { operationId: string; parameters?: { name: string; in: string; required: boolean }[]; requestBody?: { content: Record<string, { schema: { oneOf: { $ref: string }[] } }> }; responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, Record<string, unknown>> };
};

/** Every `$ref` in the document, so each can be checked to point somewhere. */
function refs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refs(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

function resolves(doc: Doc, ref: string): boolean {
  let node: unknown = doc;
  for (const part of ref.replace(/^#\//, '').split('/')) {
    if (!node || typeof node !== 'object') return false;
    node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node !== undefined;
}

describe('the OpenAPI document of the gateway', () => {
  const doc = openApiDocument() as unknown as Doc;

  it('is OpenAPI 3.1 whose references all resolve, and is plain JSON', () => {
    expect(doc.openapi).toBe('3.1.0');
    for (const ref of refs(doc)) expect([ref, resolves(doc, ref)]).toEqual([ref, true]);
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });

  it('takes every command type on POST /v1/commands, one envelope schema each', () => {
    const oneOf = doc.paths['/v1/commands']!['post']!.requestBody!.content['application/json']!.schema.oneOf.map((r) => r.$ref);
    expect(oneOf).toEqual(commands.map((c) => `#/components/schemas/${c.type}Command`));
    for (const c of commands) {
      const schema = doc.components.schemas[`${c.type}Command`] as { properties: { type: { const: string } }; required: string[] };
      expect(schema.properties.type.const).toBe(c.type);
      expect(schema.required).toContain('signature');
    }
    const responses = Object.keys(doc.paths['/v1/commands']!['post']!.responses);
    expect(responses).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404', '409', '413', '415', '500', '503', '504']));
  });

  it('has one GET route per query, with its path and query-string parameters', () => {
    for (const q of queries) {
      const route = doc.paths[`/v1/${q.service}/${openApiPath(q.httpPath)}`]?.['get'];
      expect(route).toBeDefined();
      const inPath = route!.parameters!.filter((p) => p.in === 'path').map((p) => p.name);
      expect(inPath).toEqual(pathParamsOf(q.httpPath));
    }
    const list = doc.paths['/v1/registry/agents']!['get']!;
    expect(list.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'role', in: 'query', required: false })]));
    const get = doc.paths['/v1/registry/agents/{agentId}']!['get']!;
    expect(get.parameters).toEqual([
      expect.objectContaining({ name: 'agentId', in: 'path', required: true }),
      expect.objectContaining({ name: 'minPosition', in: 'query', required: false }),
    ]);
  });

  it('describes the event stream, health, metrics and itself, and every event', () => {
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/events', '/health', '/metrics', '/docs', '/docs/openapi.json']));
    const params = doc.paths['/v1/events']!['get']!.parameters!.map((p) => `${p.in}:${p.name}`);
    expect(params).toEqual(['header:Last-Event-ID', 'query:after', 'query:from', 'query:category', 'query:type', 'query:minPosition']);
    for (const e of events) expect(doc.components.schemas[`${e.type}Event`]).toBeDefined();
  });

  it('describes another catalog when given one', () => {
    const Make = defineCommand({ type: 'MakeThing', service: 'things', aggregate: 'thing', verb: 'make', roles: ['operator'], summary: 'Make', payload: z.object({ id: z.string() }) });
    const Get = defineQuery({ name: 'things.get', service: 'things', httpPath: 'things/:id/parts/:part', summary: 'Get', params: z.object({ id: z.string(), part: z.string(), deep: z.boolean().optional() }), result: z.object({}) });
    const other = openApiDocument({ catalog: { commands: [Make], queries: [Get] }, serverUrl: 'http://gw:8080', version: '9.9.9' }) as unknown as Doc;
    expect(other.servers).toEqual([{ url: 'http://gw:8080' }]);
    expect(Object.keys(other.components.schemas)).toContain('MakeThingCommand');
    expect(Object.keys(other.components.schemas)).not.toContain('RegisterAgentCommand');
    const route = other.paths['/v1/things/things/{id}/parts/{part}']!['get']!;
    expect(route.parameters!.map((p) => `${p.in}:${p.name}:${p.required}`)).toEqual(['path:id:true', 'path:part:true', 'query:deep:false', 'query:minPosition:false']);
  });
});
