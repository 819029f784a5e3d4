// The faults of `npm run day`, on a schedule over the run: network partitions between the NATS nodes
// (the log stream's leader cut off, then a follower, then the 2/1 split of partitions.mjs, in turn),
// a NATS node SIGKILLed and started again, a service replica SIGKILLed and started again, the gateway
// stopped and started again. Each fault is a window from its start to the moment the cluster has
// settled again (the log stream led, every replica current), which the assertions read.
import { setTimeout as sleep } from 'node:timers/promises';
import { logStreamLeader } from '../cluster/cluster-lib.mjs';
import { logStreamSettled } from '../cluster/load-lib.mjs';

export const FAULT_KINDS = ['partition', 'node', 'replica', 'gateway'];
const PARTITIONS = ['leader', 'follower', 'split'];
const OTHERS = ['node', 'replica', 'gateway'];
/** The service replicas killed in turn. */
const REPLICAS = ['tribunal-1', 'voting-2', 'proposal-1', 'dialectic-2', 'registry-1', 'debate-2', 'chamber-1'];

/**
 * When each fault comes, in seconds from the start: `kinds` (from --faults) in order at even spacing;
 * `default` is the hour's schedule, every 5 minutes, partitions (leader, follower, split in turn)
 * alternating with the others (a node, a replica, the gateway in turn), scaled to the run's length.
 */
export function faultSchedule(spec, minutes) {
  if (spec === 'none') return [];
  const seconds = minutes * 60;
  let kinds;
  if (spec === 'default') {
    const slots = Math.max(1, Math.round(seconds / 300) - 1);
    kinds = Array.from({ length: slots }, (_, i) => (i % 2 === 0 ? 'partition' : OTHERS[Math.floor(i / 2) % OTHERS.length]));
  } else {
    kinds = spec.split(',').map((s) => s.trim());
    const unknown = kinds.find((k) => !FAULT_KINDS.includes(k));
    if (unknown !== undefined) throw new Error(`unknown fault ${JSON.stringify(unknown)} (known: ${FAULT_KINDS.join(', ')}, or none, or default)`);
  }
  let partitions = 0;
  let replicas = 0;
  return kinds.map((kind, i) => ({
    kind,
    atSeconds: Math.round(((i + 1) * seconds) / (kinds.length + 1)),
    variant: kind === 'partition' ? PARTITIONS[partitions++ % PARTITIONS.length] : kind === 'replica' ? REPLICAS[replicas++ % REPLICAS.length] : undefined,
  }));
}

/**
 * Runs one fault: `cluster` gives { group, network, nodes, jsm }. Returns its window: { kind, what,
 * startedAt, endedAt (healed or restarted), settledAt }.
 */
export async function runFault(fault, { group, network, nodes, jsm, cutSeconds, downSeconds, say }) {
  const startedAt = Date.now();
  let what;
  if (fault.kind === 'partition') {
    const leader = await logStreamLeader(jsm).catch(() => undefined);
    const byName = (n) => network.nodes.find((node) => node.name === n);
    const minority = fault.variant === 'leader' ? [byName(leader ?? 'n1')] : fault.variant === 'follower' ? [network.nodes.find((n) => n.name !== leader && n.name !== 'n1') ?? network.nodes.find((n) => n.name !== leader)] : [byName('n1')];
    const majority = network.nodes.filter((n) => !minority.includes(n));
    what = `partition (${fault.variant}): ${minority.map((n) => n.name).join(',')} cut off from ${majority.map((n) => n.name).join(',')} for ${cutSeconds} s (log stream leader ${leader ?? 'none'})`;
    say(`fault: ${what}`);
    try {
      for (const a of minority) for (const b of majority) network.cut(a, b);
      await sleep(cutSeconds * 1000);
    } finally {
      network.heal();
    }
  } else if (fault.kind === 'node') {
    const leader = await logStreamLeader(jsm).catch(() => undefined);
    const node = nodes.find((n) => n.name !== leader) ?? nodes[0];
    what = `NATS node ${node.name} SIGKILLed, started again after ${downSeconds} s`;
    say(`fault: ${what}`);
    await group.kill(node.process);
    await sleep(downSeconds * 1000);
    await group.restart(node.process);
  } else if (fault.kind === 'replica') {
    what = `${fault.variant} SIGKILLed, started again after ${downSeconds} s`;
    say(`fault: ${what}`);
    await group.kill(fault.variant);
    await sleep(downSeconds * 1000);
    await group.restart(fault.variant);
  } else {
    what = 'gateway stopped (SIGTERM) and started again';
    say(`fault: ${what}`);
    await group.kill('gateway', 'SIGTERM');
    await group.restart('gateway');
  }
  const endedAt = Date.now();
  await logStreamSettled(jsm, `after the fault (${what})`, { timeoutMs: 180_000 });
  const settledAt = Date.now();
  say(`fault over: ${what}; ended ${((endedAt - startedAt) / 1000).toFixed(1)} s after it began, settled ${((settledAt - endedAt) / 1000).toFixed(1)} s later`);
  return { kind: fault.kind, variant: fault.variant, what, startedAt, endedAt, settledAt };
}
