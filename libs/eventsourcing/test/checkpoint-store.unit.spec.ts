import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileCheckpointStore, MemoryCheckpointStore, assertValidCheckpointName, type CheckpointStore } from '../src/index.js';
import { removeTempDirs, tempDir } from './helpers.js';

afterAll(removeTempDirs);

describe('checkpoint names', () => {
  it.each(['relay', 'relay.nats-v2', 'a_b', 'X9'])('accepts %s', (name) => {
    expect(() => assertValidCheckpointName(name)).not.toThrow();
  });
  it.each(['', '.', '..', '...', 'a/b', '../x', 'has space', 'é', 'x'.repeat(201)])('refuses %j', (name) => {
    expect(() => assertValidCheckpointName(name)).toThrow(TypeError);
  });
});

function describeCheckpointStore(kind: string, open: () => CheckpointStore): void {
  describe(`${kind} checkpoint store`, () => {
    it('has nothing for a new name, then the last saved position', async () => {
      const store = open();
      expect(await store.load('relay')).toBeUndefined();
      await store.save('relay', '17');
      await store.save('relay', '42');
      expect(await store.load('relay')).toBe('42');
      expect(await store.load('other')).toBeUndefined();
    });
    it('refuses bad names and empty positions', async () => {
      const store = open();
      await expect(store.save('../escape', '1')).rejects.toThrow(TypeError);
      await expect(store.load('a/b')).rejects.toThrow(TypeError);
      await expect(store.save('ok', '')).rejects.toThrow(TypeError);
    });
    it('applies concurrent saves of one name in call order', async () => {
      const store = open();
      await Promise.all(Array.from({ length: 30 }, (_, i) => store.save('busy', String(i + 1))));
      expect(await store.load('busy')).toBe('30');
    });
  });
}

describeCheckpointStore('memory', () => new MemoryCheckpointStore());
describeCheckpointStore('file', () => new FileCheckpointStore(join(tempDir(), 'checkpoints')));

describe('file checkpoint store on disk', () => {
  it('survives a new instance on the same directory and leaves no temp files', async () => {
    const directory = tempDir();
    await new FileCheckpointStore(directory).save('relay', 'opaque:position/1');
    expect(await new FileCheckpointStore(directory).load('relay')).toBe('opaque:position/1');
    expect(readdirSync(directory)).toEqual(['relay.checkpoint.json']);
    expect(JSON.parse(readFileSync(join(directory, 'relay.checkpoint.json'), 'utf8'))).toMatchObject({ name: 'relay', position: 'opaque:position/1' });
  });
  it('refuses to guess when the file is damaged', async () => {
    const directory = tempDir();
    writeFileSync(join(directory, 'relay.checkpoint.json'), '{"posit');
    await expect(new FileCheckpointStore(directory).load('relay')).rejects.toThrow(/not JSON/);
    writeFileSync(join(directory, 'relay.checkpoint.json'), '{"position": 3}');
    await expect(new FileCheckpointStore(directory).load('relay')).rejects.toThrow(/no position/);
  });
});
