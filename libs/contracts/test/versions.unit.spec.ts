import { z } from 'zod';
import { events } from '../src/catalog.js';
import { defineEvent } from '../src/define.js';
import { buildDocuments } from '../src/documents.js';
import { publishedEventOf } from '../src/json-schema.js';
import { storedSchemaVersion, UnknownEventVersion, upcastEventData } from '../src/versions.js';

/**
 * A test event whose shape changed twice: version 1 had `name` ("Ada Lovelace"), version 2 split it
 * into `first` and `last`, version 3 renamed `last` to `family`.
 */
const Renamed = defineEvent({
  type: 'TestPersonNamed',
  category: 'testperson',
  summary: 'A person was named (a test event)',
  data: z.object({ first: z.string(), family: z.string() }).strict(),
  version: 3,
  upcasters: [
    (data) => {
      const [first = '', ...rest] = (data as { name: string }).name.split(' ');
      return { first, last: rest.join(' ') };
    },
    (data) => {
      const { first, last } = data as { first: string; last: string };
      return { first, family: last };
    },
  ],
});

describe('event schema versions', () => {
  it('every event type Agora speaks has a version from 1 and an upcaster from each earlier version', () => {
    expect(events.length).toBeGreaterThan(50);
    for (const e of events) {
      expect(Number.isInteger(e.version) && e.version >= 1).toBe(true);
      expect(e.upcasters).toHaveLength(e.version - 1);
    }
  });

  it('a contract whose upcasters do not match its version is refused when it is defined', () => {
    const data = z.object({});
    expect(() => defineEvent({ type: 'TestBroken', category: 'test', summary: 'x', data, version: 2 })).toThrow(/TestBroken is at version 2: it needs 1 upcaster/);
    expect(() => defineEvent({ type: 'TestBroken', category: 'test', summary: 'x', data, upcasters: [(d) => d] })).toThrow(/needs 0 upcaster/);
    expect(() => defineEvent({ type: 'TestBroken', category: 'test', summary: 'x', data, version: 0 })).toThrow(/whole number from 1/);
    expect(defineEvent({ type: 'TestPlain', category: 'test', summary: 'x', data })).toMatchObject({ version: 1, upcasters: [] });
  });

  it('an event without a stored version is version 1; one with a version is that version', () => {
    expect(storedSchemaVersion({ actor: 'a' })).toBe(1);
    expect(storedSchemaVersion({ actor: 'a', schemaVersion: 2 })).toBe(2);
  });

  it('upcasts each older version to today\'s shape, one upcaster at a time, and leaves today\'s as it is', () => {
    const today = { first: 'Ada', family: 'Lovelace' };
    expect(upcastEventData(Renamed, 1, { name: 'Ada Lovelace' }, {})).toEqual(today);
    expect(upcastEventData(Renamed, 2, { first: 'Ada', last: 'Lovelace' }, {})).toEqual(today);
    expect(upcastEventData(Renamed, 3, today, {})).toBe(today);
    expect(Renamed.data.parse(upcastEventData(Renamed, 1, { name: 'Grace Brewster Hopper' }, {}))).toEqual({ first: 'Grace', family: 'Brewster Hopper' });
  });

  it('upcasting is pure: the stored data is not changed, and the same input gives the same output', () => {
    const stored = Object.freeze({ name: 'Ada Lovelace' });
    expect(upcastEventData(Renamed, 1, stored, {})).toEqual(upcastEventData(Renamed, 1, stored, {}));
    expect(stored).toEqual({ name: 'Ada Lovelace' });
  });

  it('a version it does not know (newer, zero, not a number) is refused by name, never read as another', () => {
    for (const version of [4, 0, 1.5, '2', null]) {
      expect(() => upcastEventData(Renamed, version, {}, {})).toThrow(UnknownEventVersion);
    }
    expect(() => upcastEventData(Renamed, 4, {}, {})).toThrow('TestPersonNamed version 4 is not one this release reads (it knows versions 1 to 3)');
  });

  it("the published schema of an event names its version: an event of another version does not validate as today's", () => {
    const published = publishedEventOf(Renamed);
    const metadata = { actor: 'a', commandId: 'c', commandType: 'NamePerson', issuedAt: '2026-11-26T10:00:00.000Z' };
    const event = { id: '0b8e4e5c-2c57-5543-bb81-78dce66bd75e', type: 'TestPersonNamed', streamId: 'testperson-1', revision: 0, position: '1', recordedAt: '2026-11-26T10:00:00.000Z', data: { first: 'Ada', family: 'Lovelace' } };
    expect(published.safeParse({ ...event, metadata: { ...metadata, schemaVersion: 3 } }).success).toBe(true);
    expect(published.safeParse({ ...event, metadata: { ...metadata, schemaVersion: 4 } }).success).toBe(false);
    expect(published.safeParse({ ...event, metadata }).success).toBe(false);
  });

  it('the JSON Schemas and the AsyncAPI document name each event\'s version', () => {
    const { files } = buildDocuments();
    const asyncapi = JSON.parse(files['asyncapi.json']!) as { components: { messages: Record<string, { 'x-agora-schema-version'?: number; headers: { schema: { properties: Record<string, { const?: string }> } } }> } };
    for (const e of events) {
      const schema = JSON.parse(files[`json-schema/events/${e.type}.json`]!) as { title: string; properties: { metadata: { properties: { schemaVersion: { const: number } }; required: string[] } } };
      expect(schema.title).toBe(`${e.type} event, version ${e.version}`);
      expect(schema.properties.metadata.properties.schemaVersion.const).toBe(e.version);
      expect(schema.properties.metadata.required).toContain('schemaVersion');
      const message = asyncapi.components.messages[e.type]!;
      expect(message['x-agora-schema-version']).toBe(e.version);
      expect(message.headers.schema.properties['Agora-Schema-Version']!.const).toBe(String(e.version));
    }
  });
});
