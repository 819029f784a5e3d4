// `npm run cluster:partitions`: network partitions under load, on the cluster `npm run cluster`
// starts (three clustered nats-server nodes, the log at 3 replicas, 2 processes per service), each
// NATS node in a network namespace of its own that this run makes (netns.mjs), Agora's processes in
// the root namespace reaching the nodes across a bridge. Each scenario cuts the network between NATS
// nodes while agents send signed commands at load (each retried with the same commandId until
// acknowledged, half of them on a few hot aggregates) and race on the same aggregates (four reviewers
// at once, every validator at once, one envelope ten times at once), then heals it. After each: every
// acknowledged command's events are in the log exactly once, no stream has two commits at one
// revision, every round and vote was decided once, and `agora audit` passes on the whole log.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { UpdateAgent } from '@agora/contracts';
import { createSignedCommand } from '@agora/identity';
import { NatsAgoraClient } from '@agora/messaging';
import { Fleet, until } from '@agora/demo/dist/fleet.js';
import { auditLog, intEnv, LOG_STREAM, prepareClusterProgram, runClusterProgram, startCluster } from './cluster-lib.mjs';
import { drive, logStreamSettled, positiveOption, readLog, scenarioList, untilAcknowledged } from './load-lib.mjs';
import { cannotMakeNamespaces, makeNetwork, removeLeftovers } from './netns.mjs';

const HELP = `Usage: npm run cluster:partitions -- [options]        (as root)

Makes a network namespace for each of 3 nats-server nodes (veth links into a bridge, addresses in a
private 10.99.<k>.0/24 that exists only on those links), starts the cluster there with the log stream
AGORA_EVENTS at 3 replicas, and Agora's registry, proposal, tribunal and voting as 2 processes each,
the projections and the gateway in the root namespace, each attached to one node. Then, per scenario:
  leader     the node leading the log stream cut off from the other two
  follower   a node that does not lead it cut off from the other two
  split      n1 (one process of every service, the projections) cut off from n2 and n3 (the other
             processes, the gateway), with agents on both sides
  client     n3 cut off from its clients (every packet between it and the root namespace dropped,
             silently; it stays in the cluster) for max(--cut, 20) seconds, while an agent connected
             to it sends one command after another (each retried until acknowledged): the agent's
             connection notices the dead link from its pings and goes on through another node. It
             prints the longest time the agent could not act, which must stay within 15 s
The cut drops every packet between the nodes on either side (blackhole routes inside their
namespaces); every node stays reachable from the root namespace, so the processes attached to a node
are on its side. During the cut: --count signed UpdateAgent commands, --inflight at a time, each sent
again with the same commandId (per attempt --timeout ms) until acknowledged, half of them on --hot
agents; and --rounds proposals whose four reviewers approve at once, voting sessions whose validators
vote at once, and envelopes sent ten times at once. The cut comes once a quarter of the commands are
acknowledged and lasts --cut seconds (the last third of the commands waits for the heal).

After each scenario it reads the log: lost = acknowledged but no event, duplicated = a commandId with
more than one, two commits at one revision of a stream, a round or a vote decided other than once;
and \`agora audit\` reads the whole log. It prints acknowledged, refused (refusal answers, such as
unavailable, each followed by a retry), retried, lost, duplicated and the longest time the log stream
had no leader (asked from the majority side every 250 ms, 1 s timeout). Exits 1 on any loss, duplicate,
double decision, unacknowledged command or audit finding; 2 when it cannot run here (not root, no
\`ip netns\`). Everything it made (namespaces, links, processes) is removed at the end, on Ctrl-C and
on failure; what a killed run left is removed by the next one.

Options:
  --small            the CI size: --count 150 --inflight 16 --cut 8 --rounds 2 --agents 16
  --count N          commands per scenario (default 1000)
  --inflight N       commands in flight (default 32)
  --cut S            seconds the network stays cut (default 15)
  --rounds N         aggregates of each kind raced during the cut (default 4)
  --timeout MS       per-attempt request timeout (default 3000)
  --give-up S        a command still unacknowledged after this many seconds is counted so (default 120)
  --agents N         agents the commands update, round robin (default 32)
  --hot N            agents every other command updates, racing on the same aggregates (default 4)
  --scenarios LIST   comma-separated, from leader, follower, split, client (default all four)
  --keep             keep the cluster's directory (default: a temporary one, removed at the end)
  --help             this text

Environment:
  AGORA_CLUSTER_DIR          the cluster's state and logs (default: a new temporary directory)
  PORT                       the gateway's HTTP port (default 18090)
  NATS_SERVER_BIN            the nats-server binary (default: as npm run cluster)`;

const SCENARIOS = ['leader', 'follower', 'split', 'client'];
/** How long an agent may be unable to act when its node is cut off (issue 44: a client moves to another node within 15 s). */
const CLIENT_OUTAGE_LIMIT_MS = 15_000;
const SERVICES = ['registry', 'proposal', 'tribunal', 'voting'];

const { values } = parseArgs({
  options: {
    small: { type: 'boolean', default: false },
    count: { type: 'string' },
    inflight: { type: 'string' },
    cut: { type: 'string' },
    rounds: { type: 'string' },
    timeout: { type: 'string', default: '3000' },
    'give-up': { type: 'string', default: '120' },
    agents: { type: 'string' },
    hot: { type: 'string', default: '4' },
    scenarios: { type: 'string', default: SCENARIOS.join(',') },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const sizes = values.small ? { count: '150', inflight: '16', cut: '8', rounds: '2', agents: '16' } : { count: '1000', inflight: '32', cut: '15', rounds: '4', agents: '32' };
const positive = (name) => positiveOption(values, name, { program: 'partitions', help: HELP, fallback: sizes[name] });
const COUNT = Math.max(8, Math.floor(positive('count')));
const INFLIGHT = Math.floor(positive('inflight'));
const CUT_MS = positive('cut') * 1000;
const ROUNDS = Math.floor(positive('rounds'));
const ATTEMPT_MS = positive('timeout');
const GIVE_UP_MS = positive('give-up') * 1000;
const AGENTS = Math.floor(positive('agents'));
const HOT = Math.min(AGENTS, Math.floor(positive('hot')));
const scenarios = scenarioList(values.scenarios, SCENARIOS, 'partitions');
const why = cannotMakeNamespaces();
if (why) {
  console.error(`partitions: cannot run here: ${why}`);
  process.exit(2);
}
const gatewayPort = intEnv('PORT', 18090, 'partitions');
const { dir, ownDir, nats, group, unexpected } = prepareClusterProgram('partitions', [...SERVICES, 'gateway', 'projections', 'cli']);
const secs = (ms) => (ms / 1000).toFixed(1);

const REVIEWERS = [
  ['part-risk', 'risk'],
  ['part-premise', 'premise'],
  ['part-evidence', 'evidence'],
  ['part-execution', 'execution'],
];
const VALIDATORS = ['part-v1', 'part-v2', 'part-v3', 'part-v4', 'part-v5'];

/** Counts of refusal answers by code, across a scenario. */
function tally() {
  const byCode = {};
  return { byCode, add: (code) => (byCode[code] = (byCode[code] ?? 0) + 1), total: () => Object.values(byCode).reduce((a, b) => a + b, 0) };
}

/** An envelope through the gateway, as an agent without NATS sends it. */
const overHttp = (url, envelope) => async () => (await globalThis.fetch(`${url}/v1/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope), signal: globalThis.AbortSignal.timeout(ATTEMPT_MS) })).json();

/** Polls the log stream's leader every 250 ms through `jsm` until `stop()`; the longest time it saw none. */
function watchLeader(jsm) {
  let running = true;
  let lastSeen = Date.now();
  let longest = 0;
  const leaders = [];
  const done = (async () => {
    while (running) {
      let leader;
      try {
        leader = (await jsm.streams.info(LOG_STREAM)).cluster?.leader;
      } catch {
        leader = undefined;
      }
      const now = Date.now();
      if (leader) {
        longest = Math.max(longest, now - lastSeen);
        lastSeen = now;
        if (leaders.at(-1) !== leader) leaders.push(leader);
      }
      await sleep(250);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
      return { longestMs: Math.max(longest, Date.now() - lastSeen), leaders };
    },
  };
}

/** The races of one scenario, set up before the cut: proposals with round 1 open, voting sessions with their validators drawn. */
async function prepareRaces(fleet, tag) {
  const query = (name, params) => fleet.query(name, params).catch(() => undefined);
  const sign = (actor, type, payload) => createSignedCommand({ type, actor, payload, secretKey: fleet.secretKeyOf(actor) });
  // The cluster may still be electing leaders after the last scenario's heal: a set-up command is sent
  // again, with the same commandId, on a refusal an agent retries (unavailable, timeout), as the races are.
  const must = async (type, payload) => {
    const sent = await untilAcknowledged(overHttp(fleet.url, sign('part-exec', type, payload)), { giveUpMs: 60_000 });
    if (!sent.ok) throw new Error(`setting up the ${tag} races: ${type} was not acknowledged after ${sent.attempts} attempts: ${sent.refused ? `${sent.refused.code}: ${sent.refused.message}` : sent.last}`);
  };
  const proposals = Array.from({ length: ROUNDS }, (_, i) => `part-${tag}-p${i}`);
  const sessions = Array.from({ length: ROUNDS }, (_, i) => `part-${tag}-s${i}`);
  await Promise.all(proposals.map((proposalId) => must('SubmitProposal', { proposalId, title: proposalId, body: 'Ship the release on Friday.', problem: 'Users wait for the fix' })));
  await Promise.all(sessions.map((requestId) => must('CreateVotingSession', { requestId, actionType: 'deploy_production', riskLevel: 'high', summary: `Roll out ${requestId}` })));
  await Promise.all(proposals.map((proposalId) => until(`round 1 of ${proposalId}`, async () => (await query('GetProposal', { proposalId }))?.rounds?.find((r) => r.round === 1 && r.status === 'open'), 60_000)));
  const drawn = await Promise.all(sessions.map(async (sessionId) => ({ sessionId, validators: (await until(`session ${sessionId}`, () => query('GetVotingSession', { sessionId }), 60_000)).validators.map((v) => v.agentId) })));
  const envelopes = [
    ...proposals.flatMap((proposalId) => REVIEWERS.map(([agent, constitution]) => sign(agent, 'SubmitReview', { proposalId, round: 1, constitution, verdict: 'approve', reasoning: 'No violation of my constitution.' }))),
    ...drawn.flatMap(({ sessionId, validators }) => validators.map((agent) => sign(agent, 'CastValidatorVote', { sessionId, decision: 'approve', reasoning: 'The canary held.', confidence: 0.85 }))),
  ];
  const copied = Array.from({ length: ROUNDS }, (_, i) => sign('part-exec', 'CreateVotingSession', { requestId: `part-${tag}-e${i}`, actionType: 'deploy_production', riskLevel: 'high', summary: 'Sent ten times' }));
  return { proposals, sessions, envelopes, copied, query };
}

/** Sends every race at once (each copy of each copied envelope ten times), each retried until acknowledged. */
async function runRaces(fleet, races, refusals) {
  const sends = [...races.envelopes, ...races.copied.flatMap((e) => Array.from({ length: 10 }, () => e))];
  const results = await Promise.all(sends.map((envelope) => untilAcknowledged(overHttp(fleet.url, envelope), { giveUpMs: GIVE_UP_MS, onRefusal: refusals.add })));
  return { sent: sends.length, acknowledged: results.filter((r) => r.ok).length, retries: results.reduce((n, r) => n + r.attempts - 1, 0) };
}

/** What the log says of one scenario's commands and races, and of the whole log (revisions, decisions). */
function check(events, results, races) {
  const counts = new Map();
  const sent = new Set(results.map((r) => r.commandId));
  const copied = new Set(races.copied.map((e) => e.commandId));
  const revisions = new Set();
  let twoAtOneRevision = 0;
  const closed = new Map();
  const decided = new Map();
  const created = new Map();
  for (const event of events) {
    const commandId = event.metadata?.['commandId'];
    if (event.streamId.startsWith('agent-') && sent.has(commandId)) counts.set(commandId, (counts.get(commandId) ?? 0) + 1);
    const at = `${event.streamId}@${event.revision}`;
    if (revisions.has(at)) twoAtOneRevision++;
    revisions.add(at);
    if (event.type === 'ReviewRoundClosed') closed.set(`${event.streamId}#${event.data.round}`, (closed.get(`${event.streamId}#${event.data.round}`) ?? 0) + 1);
    if (event.type === 'VotingSessionDecided') decided.set(event.streamId, (decided.get(event.streamId) ?? 0) + 1);
    if (event.type === 'VotingSessionCreated' && copied.has(commandId)) created.set(commandId, (created.get(commandId) ?? 0) + 1);
  }
  const acknowledged = results.filter((r) => r.ok);
  return {
    lost: acknowledged.filter((r) => !counts.has(r.commandId)).length,
    duplicated: [...counts.values()].filter((c) => c > 1).length,
    twoAtOneRevision,
    roundsClosedOtherThanOnce: [...closed.values()].filter((c) => c !== 1).length + races.proposals.filter((id) => !closed.has(`proposal-${id}#1`)).length,
    votesDecidedOtherThanOnce: [...decided.values()].filter((c) => c !== 1).length + races.sessions.filter((id) => !decided.has(`voting_session-${id}`)).length,
    envelopesStoredOtherThanOnce: races.copied.filter((e) => created.get(e.commandId) !== 1).length,
  };
}

async function runScenario(name, ctx) {
  const { fleet, nodes, network, urls, passwords, operatorId, agentIds } = ctx;
  const connect = (servers, user, label) => NatsAgoraClient.connect({ servers, name: `agora-partitions-${label}`, credentials: { user, pass: passwords[user] } });
  const all = await connect(urls, 'service', 'watch');
  try {
    const leader = await logStreamSettled(await jetstreamManager(all.connection), `before ${name}`);
    const byName = (n) => nodes.find((node) => node.name === n);
    const minority = name === 'leader' ? [byName(leader)] : name === 'follower' ? [nodes.find((n) => n.name !== leader && n.name !== 'n1') ?? nodes.find((n) => n.name !== leader)] : [byName('n1')];
    const majority = nodes.filter((n) => !minority.includes(n));
    console.log(`\n== ${name}: ${minority.map((n) => n.name).join(', ')} cut off from ${majority.map((n) => n.name).join(', ')} (log stream leader: ${leader}) once ${Math.floor(COUNT / 4)} of ${COUNT} commands are acknowledged, for ${secs(CUT_MS)} s; agents on ${name === 'split' ? 'both sides' : 'the majority side'}`);

    const tag = `${name}-${Date.now().toString(36)}`;
    const races = await prepareRaces(fleet, tag);
    const majorityClient = await connect(majority.map((n) => n.url), 'agent', 'majority');
    const minorityClient = name === 'split' ? await connect(minority.map((n) => n.url), 'agent', 'minority') : undefined;
    const watchConnection = await connect(majority.map((n) => n.url), 'service', 'leader');
    const watch = watchLeader(await jetstreamManager(watchConnection.connection, { timeout: 1000 }));
    const load = tally();
    const raceRefusals = tally();
    const t0 = Date.now();
    let cutAt;
    let healedAt;
    let releaseHold;
    const hold = new Promise((r) => (releaseHold = r));
    let faultDone;
    let raced;
    const fault = async () => {
      cutAt = Date.now();
      try {
        for (const a of minority) for (const b of majority) network.cut(a, b);
        console.log(`   ${secs(cutAt - t0)} s: cut`);
        const racing = runRaces(fleet, races, raceRefusals);
        await sleep(CUT_MS);
        network.heal();
        healedAt = Date.now();
        console.log(`   ${secs(healedAt - t0)} s: healed`);
        raced = await racing;
      } finally {
        network.heal();
        healedAt ??= Date.now();
        releaseHold();
      }
    };
    const results = await drive(
      COUNT,
      (i) => {
        // Odd commands race on the HOT first agents; in the split, half of them are sent through n1.
        const envelope = createSignedCommand({ type: 'UpdateAgent', actor: operatorId, payload: { agentId: agentIds[i % 2 === 1 ? ((i - 1) / 2) % HOT : i % agentIds.length], displayName: `${name} ${i}` }, secretKey: fleet.secretKeyOf(operatorId), commandId: randomUUID() });
        const client = minorityClient && i % 4 >= 2 ? minorityClient : majorityClient;
        return { commandId: envelope.commandId, send: () => client.request(UpdateAgent.subject, envelope, { timeoutMs: ATTEMPT_MS }) };
      },
      { inflight: INFLIGHT, giveUpMs: GIVE_UP_MS, onRefusal: load.add, holdFrom: Math.floor((COUNT * 2) / 3), hold, onAck: (acked) => acked === Math.floor(COUNT / 4) && faultDone === undefined && (faultDone = fault()) },
    );
    if (faultDone === undefined) throw new Error(`${name}: the load ended before ${Math.floor(COUNT / 4)} acknowledgements, so nothing was cut`);
    await faultDone;
    await logStreamSettled(await jetstreamManager(all.connection), `after ${name}`);
    const seen = await watch.stop();
    await Promise.all([majorityClient.close(), minorityClient?.close(), watchConnection.close()]);

    // The read models catch up with the decisions (the reactions come first), then the log is read.
    await Promise.all(races.proposals.map((id) => until(`${id} approved`, async () => ((await races.query('GetProposal', { proposalId: id }))?.status === 'approved' ? true : undefined), 60_000).catch(() => undefined)));
    await Promise.all(races.sessions.map((id) => until(`${id} decided`, async () => ((await races.query('GetVotingSession', { sessionId: id }))?.recommendation ? true : undefined), 60_000).catch(() => undefined)));
    const found = check(await readLog(urls, { user: 'auditor', pass: passwords.auditor }), results, races);
    const audit = await auditLog(ctx.shared);
    const acknowledged = results.filter((r) => r.ok).length;
    const figures = {
      scenario: name,
      cut: `${minority.map((n) => n.name).join(',')} from ${majority.map((n) => n.name).join(',')}`,
      leaderBefore: leader,
      leaders: seen.leaders,
      sent: COUNT,
      acknowledged,
      unacknowledged: COUNT - acknowledged,
      refused: load.total(),
      refusedBy: load.byCode,
      retried: results.reduce((n, r) => n + r.attempts - 1, 0),
      ...found,
      races: { ...raced, refused: raceRefusals.total(), refusedBy: raceRefusals.byCode },
      longestWithoutLeaderMs: seen.longestMs,
      audit: audit.code === 0 ? 'exit 0, 0 findings' : `exit ${audit.code}${audit.report ? `, ${audit.report.findings?.length} findings` : ''}`,
      seconds: Number(secs(Date.now() - t0)),
    };
    console.log(
      [
        `   commands: sent ${COUNT}, acknowledged ${acknowledged}, refused ${figures.refused} ${JSON.stringify(load.byCode)} (each sent again), retried ${figures.retried}, unacknowledged ${figures.unacknowledged}`,
        `   races: ${raced?.sent ?? 0} sent at once, ${raced?.acknowledged ?? 0} acknowledged, refused ${figures.races.refused} ${JSON.stringify(raceRefusals.byCode)}, retried ${raced?.retries ?? 0}`,
        `   log: lost ${found.lost}, duplicated ${found.duplicated}, two commits at one revision ${found.twoAtOneRevision}, rounds closed other than once ${found.roundsClosedOtherThanOnce}, votes decided other than once ${found.votesDecidedOtherThanOnce}, envelopes stored other than once ${found.envelopesStoredOtherThanOnce}`,
        `   longest without a leader ${secs(seen.longestMs)} s (leaders seen: ${seen.leaders.join(' -> ') || 'none'}); ${figures.seconds} s in all`,
        `   agora audit of the whole log: ${figures.audit}${audit.code === 0 ? '' : `\n${audit.tail}`}`,
      ].join('\n'),
    );
    return figures;
  } finally {
    await all.close();
  }
}

/**
 * The client-link scenario: an agent connected to n3 alone (no Agora process is attached there; the
 * others it learns from the server), n3 then cut off from every client for max(--cut, 20 s) while it
 * stays in the cluster. The agent sends one UpdateAgent after another, each sent again with the same
 * commandId until acknowledged; the longest time between two acknowledgements is the longest it could
 * not act. Its connection notices the dead link from its pings (NATS_PING_INTERVAL_MS, NATS_MAX_PINGS_OUT).
 */
async function runClientLink(ctx) {
  const { fleet, nodes, network, urls, passwords, operatorId, agentIds } = ctx;
  const node = nodes.at(-1);
  const cutMs = Math.max(CUT_MS, 20_000);
  const client = await NatsAgoraClient.connect({ servers: node.url, name: 'agora-partitions-client', credentials: { user: 'agent', pass: passwords.agent } });
  const learned = client.connection.info?.connect_urls ?? [];
  console.log(`\n== client: ${node.name} cut off from its clients for ${secs(cutMs)} s, an agent connected to it (it learned ${learned.join(', ') || 'no other node'} from the server)`);
  const refusals = tally();
  const results = [];
  const t0 = Date.now();
  let running = true;
  const acting = (async () => {
    for (let i = 0; running; i++) {
      const envelope = createSignedCommand({ type: 'UpdateAgent', actor: operatorId, payload: { agentId: agentIds[i % agentIds.length], displayName: `client ${i}` }, secretKey: fleet.secretKeyOf(operatorId), commandId: randomUUID() });
      const sent = await untilAcknowledged(() => client.request(UpdateAgent.subject, envelope, { timeoutMs: ATTEMPT_MS }), { giveUpMs: GIVE_UP_MS, onRefusal: refusals.add });
      results.push({ commandId: envelope.commandId, ...sent });
    }
  })();
  try {
    await sleep(2_000);
    const before = client.connection.getServer();
    const cutAt = Date.now();
    network.isolate(node);
    console.log(`   ${secs(cutAt - t0)} s: ${node.name} cut off from its clients (the agent on ${before})`);
    await sleep(cutMs);
    network.heal();
    console.log(`   ${secs(Date.now() - t0)} s: healed`);
    await sleep(2_000);
  } finally {
    network.heal();
    running = false;
    await acting;
  }
  const movedTo = client.connection.getServer();
  await client.close();
  const acked = results.filter((r) => r.ok).map((r) => r.ackedAt);
  let longestOutageMs = 0;
  for (let i = 1; i < acked.length; i++) longestOutageMs = Math.max(longestOutageMs, acked[i] - acked[i - 1]);
  const found = check(await readLog(urls, { user: 'auditor', pass: passwords.auditor }), results, { proposals: [], sessions: [], copied: [] });
  const figures = {
    scenario: 'client',
    cut: `${node.name} from its clients`,
    sent: results.length,
    acknowledged: acked.length,
    unacknowledged: results.length - acked.length,
    refused: refusals.total(),
    refusedBy: refusals.byCode,
    lost: found.lost,
    duplicated: found.duplicated,
    movedTo,
    longestOutageMs,
    limitMs: CLIENT_OUTAGE_LIMIT_MS,
    seconds: Number(secs(Date.now() - t0)),
  };
  console.log(
    [
      `   commands: sent ${figures.sent} one after another, acknowledged ${figures.acknowledged}, refused or unanswered ${figures.refused} ${JSON.stringify(refusals.byCode)} (each sent again), unacknowledged ${figures.unacknowledged}; lost ${found.lost}, duplicated ${found.duplicated}`,
      `   the agent went on through ${movedTo}; longest it could not act: ${secs(longestOutageMs)} s (limit ${secs(CLIENT_OUTAGE_LIMIT_MS)} s)`,
    ].join('\n'),
  );
  return figures;
}

async function main() {
  const left = removeLeftovers();
  if (left.length > 0) console.log(`partitions: removed what an earlier run left: ${left.join(', ')}`);
  const network = makeNetwork(3);
  process.on('exit', network.teardown);
  console.log(`Cluster partitions: ${COUNT} signed UpdateAgent commands per scenario, ${INFLIGHT} in flight, per-attempt timeout ${ATTEMPT_MS} ms, cut ${secs(CUT_MS)} s, ${ROUNDS} races of each kind`);
  console.log(`partitions: network ${network.subnet}: bridge ${network.bridge} (${network.gateway}), ${network.nodes.map((n) => `${n.name} in namespace ${n.netns} at ${n.host}`).join(', ')}`);
  const nodes = network.nodes.map((n, i) => ({ n: i + 1, name: n.name, process: `nats-${n.name}`, host: n.host, netns: n.netns, client: 4222, route: 6222, monitor: 8222, url: `nats://${n.host}:4222` }));
  const say = (line) => console.log(`partitions: ${line}`);
  const { urls, passwords, shared } = await startCluster(group, { dir, natsPort: 4222, replicas: 2, nats, gatewayPort, metricsPort: 0, log: say, nodes, services: SERVICES });
  const sync = await Promise.all(nodes.map(async (n) => `${n.name} ${(await (await globalThis.fetch(`http://${n.host}:${n.monitor}/varz`)).json()).jetstream?.config?.sync_always ? 'sync_always' : 'no sync_always'}`));
  say(`cluster up: ${urls.join(' ')}; ${sync.join(', ')}; ${SERVICES.join(', ')} as 2 processes each (process 1 on n1, 2 on n2), projections on n1, gateway on n2`);

  const fleet = Fleet.fromOperatorKeyFile(`http://127.0.0.1:${gatewayPort}`, shared.keyFile, dir, say);
  const agentIds = Array.from({ length: AGENTS }, (_, i) => `part-agent-${i}`);
  await fleet.enlist({
    'part-op': { roles: ['operator'] },
    'part-exec': { roles: ['executive'] },
    ...Object.fromEntries(REVIEWERS.map(([agent, constitution]) => [agent, { roles: ['reviewer'], constitutions: [constitution], specializations: ['planning'], trustScore: 700 }])),
    ...Object.fromEntries(VALIDATORS.map((agent, i) => [agent, { roles: ['validator'], specializations: ['security'], trustScore: 900 - i * 40 }])),
    ...Object.fromEntries(agentIds.map((agentId) => [agentId, { roles: ['executive'] }])),
  });

  const all = [];
  const clientLinks = [];
  for (const name of scenarios) {
    const ctx = { fleet, nodes: network.nodes.map((n, i) => ({ ...n, url: urls[i] })), network, urls, passwords, shared, operatorId: 'part-op', agentIds };
    if (name === 'client') clientLinks.push(await runClientLink(ctx));
    else all.push(await runScenario(name, ctx));
  }

  const header = ['scenario', 'cut', 'acknowledged', 'refused', 'retried', 'lost', 'duplicated', 'without a leader s'];
  const rows = all.map((f) => [f.scenario, f.cut, `${f.acknowledged + (f.races.acknowledged ?? 0)} of ${f.sent + (f.races.sent ?? 0)}`, String(f.refused + f.races.refused), String(f.retried + (f.races.retries ?? 0)), String(f.lost), String(f.duplicated), secs(f.longestWithoutLeaderMs)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(`\n${line(header)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |\n${rows.map(line).join('\n')}\n`);
  console.log(`partitions: result ${JSON.stringify(all)}`);
  for (const f of clientLinks) console.log(`partitions: client link: longest an agent could not act ${secs(f.longestOutageMs)} s (limit ${secs(f.limitMs)} s), ${f.acknowledged} of ${f.sent} commands acknowledged, through ${f.movedTo} after the cut; result ${JSON.stringify(f)}`);
  const badLinks = clientLinks.filter((f) => f.longestOutageMs > f.limitMs || f.lost || f.duplicated || f.unacknowledged);
  if (badLinks.length > 0) console.log(`partitions: FAILED: the client link (longest outage ${badLinks.map((f) => `${secs(f.longestOutageMs)} s`).join(', ')})`);
  const bad = all.filter((f) => f.audit !== 'exit 0, 0 findings' || f.lost || f.duplicated || f.unacknowledged || f.twoAtOneRevision || f.roundsClosedOtherThanOnce || f.votesDecidedOtherThanOnce || f.envelopesStoredOtherThanOnce || f.races.acknowledged !== f.races.sent);
  if (bad.length > 0) console.log(`partitions: FAILED in ${bad.map((f) => f.scenario).join(', ')}`);
  if (unexpected.length > 0) console.log(`partitions: FAILED: processes exited unasked: ${unexpected.join(', ')}`);

  // The whole log once more, as an operator would audit it after the partitions.
  const audit = await auditLog(shared);
  console.log(`partitions: audit exit ${audit.code}${audit.report ? `, ${audit.report.findings?.length} findings` : ''}${audit.code === 0 ? '' : `\n${audit.tail}`}`);
  if (bad.length > 0 || badLinks.length > 0 || unexpected.length > 0 || audit.code !== 0) return 1;
  console.log('partitions: every scenario: 0 lost, 0 duplicated, no two commits at one revision, every round and vote decided once, every command acknowledged; the audit found nothing');
  return 0;
}

await runClusterProgram('partitions', group, main, { dir, remove: ownDir && !values.keep });
