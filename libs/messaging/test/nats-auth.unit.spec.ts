/**
 * No agent's NATS user may overlap a process's: the users file `agora setup nats` writes is refused
 * for a registry holding an active agent whose id is reserved (a process's NATS user, a service
 * actor's inbox token), whose inbox prefix would then be that process's.
 */
import { generateKeyPair } from '@agora/identity';
import { checkInboxPrefixes, natsAuthorization, SERVICE_NATS_USERS, type NatsAgent } from '../src/index.js';

const agent = (agentId: string, status: NatsAgent['status'] = 'active'): NatsAgent => ({ agentId, publicKey: generateKeyPair().publicKey, roles: ['executive'], status });

describe('inbox prefixes of NATS users', () => {
  it.each([...SERVICE_NATS_USERS, 'service', 'agent', 'observer', 'auditor', 'service_registry'])('refuses a users file for an active agent named %s, saying why and what to do', (agentId) => {
    expect(() => natsAuthorization([agent('root'), agent(agentId)])).toThrow(new RegExp(`agent id "${agentId}" is reserved: .*disable the agent ${agentId}`));
  });

  it('writes the file for ordinary ids, and for a reserved id that is disabled (it gets no user)', () => {
    expect(() => checkInboxPrefixes([agent('alice'), agent('gateway2'), agent('service_bot')])).not.toThrow();
    expect(natsAuthorization([agent('alice'), agent('gateway', 'disabled')])).not.toContain('# gateway');
  });
});
