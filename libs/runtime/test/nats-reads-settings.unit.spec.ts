// AGORA_NATS_READS as every process reads it: closed by default for a process that connects as a NATS
// user (wherever NATS has users, agents have theirs and may publish queries), open on a NATS without
// users; an explicit setting wins and is remembered as explicit; anything else is refused, naming it.
import { ConfigError, readRuntimeConfig } from '../src/index.js';

describe('the NATS reads setting of a process', () => {
  const read = (env: NodeJS.ProcessEnv) => readRuntimeConfig({ EVENT_STORE: 'jetstream', ...env }, { natsByDefault: true }).natsReads;
  const user = { NATS_USER: 'proposal', NATS_PASSWORD: 'pw' };

  it('is closed for a NATS user and open on a NATS without users, unless set', () => {
    expect(read(user)).toEqual({ mode: 'closed', audience: 'agora', explicit: false });
    expect(read({})).toEqual({ mode: 'open', audience: 'agora', explicit: false });
    expect(read({ ...user, AGORA_NATS_READS: 'open' })).toEqual({ mode: 'open', audience: 'agora', explicit: true });
    expect(read({ AGORA_NATS_READS: 'closed', AGORA_READ_AUDIENCE: 'prod' })).toEqual({ mode: 'closed', audience: 'prod', explicit: true });
  });

  it('refuses anything but open or closed, naming the setting', () => {
    expect(() => read({ ...user, AGORA_NATS_READS: 'shut' })).toThrow(ConfigError);
    expect(() => read({ ...user, AGORA_NATS_READS: 'shut' })).toThrow(/^AGORA_NATS_READS must be open or closed/);
  });
});
