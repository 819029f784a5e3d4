/**
 * Where A2A push notifications may go. A webhook is `https` on a public address; `http`, and
 * loopback, private, link-local and cloud metadata addresses, only for the hosts an operator lists
 * (AGORA_A2A_PUSH_ALLOW, for development). The check runs when a caller registers a webhook and
 * again, on the address actually connected to, at every delivery (a name that later resolves to a
 * refused address is refused then); deliveries follow no redirect.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** Addresses no webhook may be on unless its host is listed: loopback, private, link-local (cloud metadata), shared, reserved, multicast. */
const REFUSED_V4 = new BlockList();
const REFUSED_V6 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  REFUSED_V4.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  REFUSED_V6.addSubnet(net, prefix, 'ipv6');

/** Why an address may not receive a push, or undefined when it may. */
export function refusedAddress(address: string): string | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const ip = mapped ?? address;
  const family = isIP(ip);
  if (family === 0) return `${JSON.stringify(address)} is not an address`;
  // Two lists: a check of an IPv4 address against IPv6 rules would match it as IPv4-mapped.
  return (family === 4 ? REFUSED_V4.check(ip, 'ipv4') : REFUSED_V6.check(ip, 'ipv6')) ? `${address} is a loopback, private, link-local or reserved address` : undefined;
}

export class PushTargetRefused extends Error {}

/** The hosts an operator allows (`host` or `host:port`); a URL's host matches by name, or by name and port. */
export class PushTargets {
  private readonly allowed: ReadonlySet<string>;

  constructor(allowHosts: readonly string[] = []) {
    this.allowed = new Set(allowHosts.map((h) => h.toLowerCase()));
  }

  /** Whether the operator listed the URL's host (with or without its port). */
  listed(url: URL): boolean {
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    return this.allowed.has(url.hostname) || this.allowed.has(`${url.hostname}:${port}`);
  }

  /** The URL when a webhook may be registered on it; throws PushTargetRefused saying why not. */
  async check(text: string): Promise<URL> {
    if (!URL.canParse(text)) throw new PushTargetRefused(`the push URL is not a URL`);
    const url = new URL(text);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new PushTargetRefused(`a push URL is https (got ${url.protocol})`);
    if (url.username !== '' || url.password !== '') throw new PushTargetRefused('a push URL carries no user or password (use the configuration\'s authentication)');
    if (this.listed(url)) return url;
    if (url.protocol === 'http:') throw new PushTargetRefused(`a push URL is https; http only to the hosts the operator lists (AGORA_A2A_PUSH_ALLOW)`);
    for (const { address } of await resolve(url.hostname)) {
      const refused = refusedAddress(address);
      if (refused !== undefined) throw new PushTargetRefused(`${url.hostname} resolves to ${refused}: not a webhook unless the operator lists it (AGORA_A2A_PUSH_ALLOW)`);
    }
    return url;
  }

  /**
   * POSTs `body` to the webhook, connecting only to an address the check allows (resolved for this
   * connection), following no redirect; resolves with the response's status.
   */
  post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<number> {
    const listed = this.listed(url);
    const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
    // An address in the URL is connected to without a lookup: checked here.
    if (!listed && isIP(literal) !== 0 && refusedAddress(literal) !== undefined) return Promise.reject(new PushTargetRefused(`${refusedAddress(literal)}: not a webhook unless the operator lists it`));
    const lookup: LookupFunction = (hostname, options, callback) => {
      dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
        if (error) return callback(error, '', 4);
        const usable = listed ? addresses : addresses.filter((a) => refusedAddress(a.address) === undefined);
        if (usable.length === 0) return callback(new PushTargetRefused(`${hostname} resolves to no address a push may reach`), '', 4);
        if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
        callback(null, usable[0]!.address, usable[0]!.family);
      });
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolvePost, reject) => {
      const req = send(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, lookup, signal }, (res: IncomingMessage) => {
        res.resume();
        res.once('end', () => resolvePost(res.statusCode ?? 0));
        res.once('error', reject);
      });
      req.once('error', reject);
      req.end(body);
    });
  }
}

/** The addresses of a host name, or the address itself when it is one. */
async function resolve(hostname: string): Promise<{ address: string }[]> {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare) !== 0) return [{ address: bare }];
  return new Promise((done, reject) =>
    dnsLookup(bare, { all: true }, (error, addresses) => (error ? reject(new PushTargetRefused(`${hostname} cannot be resolved: ${error.code ?? error.message}`)) : done(addresses))),
  );
}
