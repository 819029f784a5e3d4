// The network `npm run cluster:partitions` runs the NATS nodes on, made and torn down by the run
// itself (as root): one network namespace per node, each joined by a veth pair to a bridge in the
// root namespace, where Agora's processes run. The addresses are a private /24 that exists only on
// these links (10.99.<k>.0/24, a k no interface or route of the machine uses, looked for from the
// run's process id on): the bridge is .1, node n is .1n. A cut between two nodes is a blackhole
// route to each other's address inside both namespaces (their packets to each other are dropped,
// silently, as on a broken network), which leaves every node reachable from the root namespace: the
// processes attached to a node stay on its side. A node cut off from its clients instead (`isolate`)
// is a blackhole route to the bridge's address inside its namespace: every client in the root
// namespace loses it silently, while it stays in the cluster. Nothing here sends a packet; every name carries the
// run's process id, so that a later run can remove what a killed one left.
import { spawnSync } from 'node:child_process';

const PREFIX = 'agp';

function ip(args, { check = true } = {}) {
  const run = spawnSync('ip', args, { encoding: 'utf8' });
  if (run.error) throw new Error(`ip ${args.join(' ')}: ${run.error.message}`);
  if (check && run.status !== 0) throw new Error(`ip ${args.join(' ')}: ${run.stderr.trim() || `exit ${run.status}`}`);
  return run;
}

/**
 * Why namespaces cannot be made here (not root, no `ip`, no permission), or undefined when they can:
 * makes and removes one namespace to find out.
 */
export function cannotMakeNamespaces() {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'it needs root (network namespaces and veth links are made with `ip netns add` and `ip link add`)';
  const probe = `${PREFIX}${process.pid.toString(36)}-probe`;
  const made = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (made.error) return `\`ip\` does not run (${made.error.message}): install Debian's iproute2`;
  if (made.status !== 0) return `\`ip netns add\` fails here: ${made.stderr.trim()}`;
  spawnSync('ip', ['netns', 'del', probe]);
  return undefined;
}

/** Removes what runs killed before their teardown left behind (names whose process id is gone). */
export function removeLeftovers() {
  const alive = (id) => {
    try {
      process.kill(parseInt(id, 36), 0);
      return true;
    } catch {
      return false;
    }
  };
  const pattern = new RegExp(`^${PREFIX}([0-9a-z]+)-`);
  const removed = [];
  for (const line of ip(['netns', 'list'], { check: false }).stdout.split('\n')) {
    const name = line.split(' ')[0];
    const id = pattern.exec(name ?? '')?.[1];
    if (id && !alive(id)) removed.push(ip(['netns', 'del', name], { check: false }) && name);
  }
  for (const line of ip(['-o', 'link', 'show'], { check: false }).stdout.split('\n')) {
    const name = /^\d+: ([^:@]+)/.exec(line)?.[1];
    const id = pattern.exec(name ?? '')?.[1];
    if (id && !alive(id)) removed.push(ip(['link', 'del', name], { check: false }) && name);
  }
  return removed;
}

/**
 * A 10.99.<k>.0/24 that no address or route of the machine uses: the first from k = the process id
 * modulo 256 on (wrapping), so that two runs started at the same moment, each seeing the other's
 * subnet still free, do not both take the first one.
 */
function freeSubnet() {
  const used = `${ip(['-o', '-4', 'addr', 'show']).stdout}\n${ip(['-4', 'route', 'show', 'table', 'all']).stdout}`;
  for (let i = 0; i < 256; i++) {
    const k = (process.pid + i) % 256;
    if (!used.includes(`10.99.${k}.`)) return `10.99.${k}`;
  }
  throw new Error('every 10.99.<k>.0/24 is in use on this machine');
}

/**
 * Makes the network for `count` nodes: returns { subnet, bridge, gateway, nodes: [{ name, netns,
 * host, link }], cut(a, b), isolate(node), heal(), isCut(a, b), teardown() }. `teardown` is idempotent and
 * synchronous (it runs from an exit handler too); every step made so far is undone by it.
 */
export function makeNetwork(count) {
  const id = `${PREFIX}${process.pid.toString(36)}`;
  const subnet = freeSubnet();
  const bridge = `${id}-br`;
  const nodes = Array.from({ length: count }, (_, i) => ({ name: `n${i + 1}`, netns: `${id}-n${i + 1}`, host: `${subnet}.${11 + i}`, link: `${id}-v${i + 1}` }));
  const made = { bridge: false, namespaces: [], links: [] };
  const cuts = new Set();
  const isolated = new Set();
  let tornDown = false;
  const teardown = () => {
    if (tornDown) return;
    tornDown = true;
    // Deleting one end of a veth pair deletes the other. (A namespace deleted with links in it keeps
    // them until its last socket is gone, which takes minutes for a connection cut mid-write.)
    for (const link of made.links) ip(['link', 'del', link], { check: false });
    for (const netns of made.namespaces) ip(['netns', 'del', netns], { check: false });
    if (made.bridge) ip(['link', 'del', bridge], { check: false });
  };
  try {
    ip(['link', 'add', bridge, 'type', 'bridge']);
    made.bridge = true;
    ip(['addr', 'add', `${subnet}.1/24`, 'dev', bridge]);
    ip(['link', 'set', bridge, 'up']);
    for (const node of nodes) {
      ip(['netns', 'add', node.netns]);
      made.namespaces.push(node.netns);
      ip(['link', 'add', node.link, 'type', 'veth', 'peer', 'name', `${node.link}p`]);
      made.links.push(node.link);
      ip(['link', 'set', `${node.link}p`, 'netns', node.netns]);
      ip(['-n', node.netns, 'link', 'set', `${node.link}p`, 'name', 'eth0']);
      ip(['-n', node.netns, 'link', 'set', 'lo', 'up']);
      ip(['-n', node.netns, 'addr', 'add', `${node.host}/24`, 'dev', 'eth0']);
      ip(['-n', node.netns, 'link', 'set', 'eth0', 'up']);
      ip(['link', 'set', node.link, 'master', bridge]);
      ip(['link', 'set', node.link, 'up']);
    }
  } catch (error) {
    teardown();
    throw error;
  }
  const key = (a, b) => [a.name, b.name].sort().join('|');
  return {
    subnet: `${subnet}.0/24`,
    bridge,
    gateway: `${subnet}.1`,
    nodes,
    /** Drops every packet between nodes a and b, both ways. */
    cut(a, b) {
      if (cuts.has(key(a, b))) return;
      ip(['-n', a.netns, 'route', 'add', 'blackhole', `${b.host}/32`]);
      ip(['-n', b.netns, 'route', 'add', 'blackhole', `${a.host}/32`]);
      cuts.add(key(a, b));
    },
    isCut: (a, b) => cuts.has(key(a, b)),
    /** Drops every packet between `node` and the root namespace (the clients), both ways; the other nodes still reach it. */
    isolate(node) {
      if (isolated.has(node.name)) return;
      ip(['-n', node.netns, 'route', 'add', 'blackhole', `${subnet}.1/32`]);
      isolated.add(node.name);
    },
    /** Removes every cut and isolation. */
    heal() {
      for (const node of nodes) {
        for (const other of nodes) if (other !== node && cuts.has(key(node, other))) ip(['-n', node.netns, 'route', 'del', 'blackhole', `${other.host}/32`], { check: false });
        if (isolated.has(node.name)) ip(['-n', node.netns, 'route', 'del', 'blackhole', `${subnet}.1/32`], { check: false });
      }
      cuts.clear();
      isolated.clear();
    },
    teardown,
  };
}
