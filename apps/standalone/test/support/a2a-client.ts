import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { mintReadToken } from '@agora/identity';

/** The official A2A client of an agent at `url`: the card and every request carry a fresh read token of its own (Authorization: Bearer). */
export function a2aClientOf(url: string, agentId: string, secretKey: string, lifetimeSeconds?: number): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${mintReadToken({ agentId, secretKey, ...(lifetimeSeconds === undefined ? {} : { lifetimeSeconds }) })}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })], cardResolver: new DefaultAgentCardResolver({ fetchImpl }) }));
  return factory.createFromUrl(url);
}
