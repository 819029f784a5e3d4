import { resolve } from 'node:path';
import { describeStore, parseStoreConfig } from '../src/open-store.js';

describe('EVENT_STORE', () => {
  it('defaults to the embedded store under ./data', () => {
    expect(parseStoreConfig(undefined, {})).toEqual({ kind: 'embedded', directory: resolve('data', 'events') });
    expect(parseStoreConfig('embedded', { AGORA_DATA_DIR: '/var/lib/agora' })).toEqual({ kind: 'embedded', directory: '/var/lib/agora/events' });
    expect(parseStoreConfig('embedded:/tmp/x', {})).toEqual({ kind: 'embedded', directory: '/tmp/x' });
  });
  it('reads jetstream from NATS_URL or the value', () => {
    expect(parseStoreConfig('jetstream', { NATS_URL: 'nats://n1:4222' })).toEqual({ kind: 'jetstream', servers: 'nats://n1:4222' });
    expect(parseStoreConfig('jetstream://n2:4222', {})).toEqual({ kind: 'jetstream', servers: 'nats://n2:4222' });
  });
  it('takes another log stream for jetstream', () => {
    expect(parseStoreConfig('jetstream://n2:4222?stream=AGORA_E2E&prefix=e2e.es', {})).toEqual({ kind: 'jetstream', servers: 'nats://n2:4222', streamName: 'AGORA_E2E', subjectPrefix: 'e2e.es' });
    expect(parseStoreConfig('jetstream?stream=S2', { NATS_URL: 'nats://n1:4222' })).toEqual({ kind: 'jetstream', servers: 'nats://n1:4222', streamName: 'S2' });
    expect(() => parseStoreConfig('jetstream?replicas=3', {})).toThrow(/unknown option "replicas"/);
  });
  it('takes atomic=auto|on|off for jetstream (one atomic batch per command on nats-server 2.12+)', () => {
    expect(parseStoreConfig('jetstream?atomic=auto', { NATS_URL: 'nats://n1:4222' })).toEqual({ kind: 'jetstream', servers: 'nats://n1:4222', atomicAppends: 'auto' });
    expect(parseStoreConfig('jetstream?atomic=on', { NATS_URL: 'nats://n1:4222' })).toEqual({ kind: 'jetstream', servers: 'nats://n1:4222', atomicAppends: true });
    expect(parseStoreConfig('jetstream://n2:4222?atomic=off', {})).toEqual({ kind: 'jetstream', servers: 'nats://n2:4222', atomicAppends: false });
    expect(() => parseStoreConfig('jetstream?atomic=yes', {})).toThrow(/unknown option "atomic"/);
  });
  it('takes a KurrentDB connection string as it is', () => {
    const config = parseStoreConfig('kurrentdb://admin:changeit@db:2113?tls=false', {});
    expect(config).toEqual({ kind: 'kurrentdb', connectionString: 'kurrentdb://admin:changeit@db:2113?tls=false' });
    expect(describeStore(config)).toBe('kurrentdb (kurrentdb://***@db:2113?tls=false)');
  });
  it('refuses anything else with the help text', () => {
    expect(() => parseStoreConfig('postgres://x', {})).toThrow(/not understood[\s\S]*kurrentdb:\/\//);
  });
});
