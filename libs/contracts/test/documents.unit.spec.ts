import { buildDocuments } from '../src/documents.js';
import { commands, events, queries } from '../src/catalog.js';

describe('generated contract documents', () => {
  it('describe every command, event and query in AsyncAPI 3', () => {
    const doc = JSON.parse(buildDocuments().files['asyncapi.json']!) as { asyncapi: string; channels: Record<string, { address: string | null }> };
    expect(doc.asyncapi).toBe('3.0.0');
    const addresses = new Set(Object.values(doc.channels).map((c) => c.address));
    for (const d of [...commands, ...events, ...queries]) expect(addresses).toContain(d.subject);
  });

  it('give each command a JSON Schema that fixes its type and requires a signature', () => {
    const schema = JSON.parse(buildDocuments().files['json-schema/commands/RegisterAgent.json']!) as {
      properties: { type: { const: string }; payload: { required: string[] } };
      required: string[];
    };
    expect(schema.properties.type.const).toBe('RegisterAgent');
    expect(schema.required).toEqual(expect.arrayContaining(['commandId', 'type', 'actor', 'issuedAt', 'payload', 'signature']));
    expect(schema.properties.payload.required).toEqual(expect.arrayContaining(['agentId', 'publicKey', 'displayName', 'roles']));
  });
});
