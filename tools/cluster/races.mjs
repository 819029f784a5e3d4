// `npm run cluster:races`: agents acting at the same moment on the same thing, on the cluster
// `npm run cluster` starts (three clustered nats-server nodes, the log at 3 replicas, 2 processes
// per service), through the gateway as agents without NATS do. Each round: the four assigned
// reviewers of a proposal approve at once; every validator of a voting session votes at once; the
// agent and the reviewer of a dialectic recovery sign its resolution at once; one signed envelope
// is sent ten times at once. Then it reads the log: one decision each, agreeing with the inputs,
// and `agora audit` passes on the whole log.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { signResolution } from '@agora/domain-dialectic';
import { openJetStreamEventStore } from '@agora/eventstore';
import { createSignedCommand } from '@agora/identity';
import { Fleet, until } from '@agora/demo/dist/fleet.js';
import { auditLog, intEnv, prepareClusterProgram, runClusterProgram, SERVICES, startCluster } from './cluster-lib.mjs';

const HELP = `Usage: npm run cluster:races -- [options]

Starts a local Agora cluster (3 clustered nats-server nodes, the log stream AGORA_EVENTS at 3
replicas, every service as --replicas processes, the projections and the gateway), then, through
the gateway, --rounds times at once:
  reviews     the four assigned reviewers of a proposal approve at once
  votes       every validator drawn for a voting session votes at once
  signatures  the paused agent and its reviewer sign their resolution at once
  envelope    one signed CreateVotingSession sent ten times at once
Then it reads the log: each proposal closed its round once and was approved once, each session
decided once (approve), each recovery resolved once with both signatures, each envelope stored
once; and \`agora audit\` checks the whole log. Exits 1 if anything was decided other than once or
the audit found anything.

Options:
  --rounds N         aggregates of each kind raced at once (default 20)
  --keep             keep the cluster's directory (default: a temporary one, removed at the end)
  --help             this text

Environment:
  AGORA_CLUSTER_DIR          the cluster's state and logs (default: a new temporary directory)
  AGORA_CLUSTER_NATS_PORT    client port of the first NATS node (default 15222); routes on this + 2000,
                             monitoring on this + 4000
  AGORA_CLUSTER_REPLICAS     processes per service (default 2)
  PORT                       the gateway's HTTP port (default 18080)
  NATS_SERVER_BIN            the nats-server binary (default: the one \`npm run nats-server\` fetched from
                             Debian unstable into .cache/nats-server, else nats-server on PATH)
  AGORA_*                    passed on to every process, as npm run cluster does`;

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '20' }, keep: { type: 'boolean', default: false }, help: { type: 'boolean', default: false } } });
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const ROUNDS = Number(values.rounds);
if (!Number.isSafeInteger(ROUNDS) || ROUNDS < 1) {
  console.error(`races: --rounds must be a positive whole number, got ${JSON.stringify(values.rounds)}`);
  process.exit(2);
}
const natsPort = intEnv('AGORA_CLUSTER_NATS_PORT', 15222, 'races');
const replicas = Math.max(1, intEnv('AGORA_CLUSTER_REPLICAS', 2, 'races'));
const gatewayPort = intEnv('PORT', 18080, 'races');
const { dir, ownDir, nats, group, unexpected } = prepareClusterProgram('races', [...SERVICES, 'gateway', 'projections', 'cli']);

const REVIEWERS = [
  ['racer-risk', 'risk'],
  ['racer-premise', 'premise'],
  ['racer-evidence', 'evidence'],
  ['racer-execution', 'execution'],
];
const VALIDATORS = ['racer-v1', 'racer-v2', 'racer-v3', 'racer-v4', 'racer-v5'];
const threshold = (value) => ({ operation: 'set_risk_threshold', parameters: { threshold: value } });

/** The fleet: an executive, the tribunal's four reviewers, five validators, one paused agent per round. */
function cast(run) {
  return {
    'racer-exec': { roles: ['executive'] },
    ...Object.fromEntries(REVIEWERS.map(([agent, constitution]) => [agent, { roles: ['reviewer'], constitutions: [constitution], specializations: ['planning'], trustScore: 700 }])),
    ...Object.fromEntries(VALIDATORS.map((agent, i) => [agent, { roles: ['validator'], specializations: ['security'], trustScore: 900 - i * 40 }])),
    ...Object.fromEntries(Array.from({ length: ROUNDS }, (_, i) => [`racer-patient-${run}-${i}`, { roles: ['executive'], specializations: ['planning'] }])),
  };
}

/** Runs `fn` on every item at once; resolves to the replies (a refusal is a reply, not a throw). */
const atOnce = (items, fn) => Promise.all(items.map(fn));

async function races(fleet, run) {
  const query = (name, params) => fleet.query(name, params).catch(() => undefined);
  const refusals = [];
  const keep = (what) => (reply) => {
    if (!reply.ok) refusals.push(`${what}: ${reply.error.code}: ${reply.error.message}`);
    return reply;
  };

  // Reviews: every proposal's round open with its four reviewers, then all 4 x ROUNDS reviews at once.
  const proposals = Array.from({ length: ROUNDS }, (_, i) => `race-${run}-p${i}`);
  await atOnce(proposals, (proposalId) => fleet.must('racer-exec', 'SubmitProposal', { proposalId, title: proposalId, body: 'Ship the release on Friday.', problem: 'Users wait for the fix' }));
  await atOnce(proposals, (proposalId) => until(`round 1 of ${proposalId}`, async () => (await query('GetProposal', { proposalId }))?.rounds?.find((r) => r.round === 1 && r.status === 'open'), 60_000));
  const reviewStart = Date.now();
  await atOnce(
    proposals.flatMap((proposalId) => REVIEWERS.map(([agent, constitution]) => ({ proposalId, agent, constitution }))),
    ({ proposalId, agent, constitution }) => fleet.send(agent, 'SubmitReview', { proposalId, round: 1, constitution, verdict: 'approve', reasoning: 'No violation of my constitution.' }).then(keep(`${agent} on ${proposalId}`)),
  );
  console.log(`races: ${proposals.length * REVIEWERS.length} reviews of ${proposals.length} proposals sent at once (${Date.now() - reviewStart} ms)`);

  // Votes: every session created, then every drawn validator of every session votes at once.
  const sessions = Array.from({ length: ROUNDS }, (_, i) => `race-${run}-s${i}`);
  await atOnce(sessions, (requestId) => fleet.must('racer-exec', 'CreateVotingSession', { requestId, actionType: 'deploy_production', riskLevel: 'high', summary: `Roll out ${requestId}` }));
  const drawn = await atOnce(sessions, async (sessionId) => ({ sessionId, validators: (await until(`session ${sessionId}`, () => query('GetVotingSession', { sessionId }), 60_000)).validators.map((v) => v.agentId) }));
  await atOnce(
    drawn.flatMap(({ sessionId, validators }) => validators.map((agent) => ({ sessionId, agent }))),
    ({ sessionId, agent }) => fleet.send(agent, 'CastValidatorVote', { sessionId, decision: 'approve', reasoning: 'The canary held.', confidence: 0.85 }).then(keep(`${agent} on ${sessionId}`)),
  );
  console.log(`races: ${drawn.reduce((n, d) => n + d.validators.length, 0)} votes on ${sessions.length} sessions sent at once`);

  // Signatures: each patient trips its breaker and agrees a resolution with its reviewer; then both sign at once, every recovery at once.
  // First every patient reports a risk that keeps it out of the reviewers' pool (0.4 and above) but
  // under its breaker's threshold (0.6), so that no patient is drawn to review another.
  const patients = Array.from({ length: ROUNDS }, (_, i) => `racer-patient-${run}-${i}`);
  await atOnce(patients, (agentId) => fleet.must(agentId, 'ReportHealth', { agentId, health: 0.6, risk: 0.5, tags: ['cascade'], metrics: { coherence: 0.6, risk_score: 0.5 } }));
  await atOnce(patients, (agentId) => until(`${agentId}'s report`, async () => ((await query('GetAgent', { agentId }))?.risk === 0.5 ? true : undefined), 60_000));
  // The dialectic service's own view of the candidates follows the same events.
  await sleep(1_000);
  const recoveries = await atOnce(patients, async (agentId) => {
    await fleet.must(agentId, 'ReportHealth', { agentId, health: 0.35, risk: 0.65, tags: ['cascade'], metrics: { coherence: 0.45, risk_score: 0.65 } });
    const sessionId = await until(`${agentId} to be paused`, async () => (await query('GetAgent', { agentId }))?.breaker?.sessionId ?? undefined, 60_000);
    const opened = await until(`a reviewer for ${sessionId}`, async () => {
      const s = await query('GetDialecticSession', { sessionId });
      return s?.reviewer ? s : undefined;
    }, 60_000);
    const reviewer = opened.reviewer;
    const conditions = [threshold(0.48)];
    await fleet.must(agentId, 'SubmitThesis', { sessionId, rootCause: 'An outside spike', proposedConditions: conditions, reasoning: 'External spike' });
    await fleet.must(reviewer, 'SubmitAntithesis', { sessionId, observedMetrics: { risk_score: 0.65 }, concerns: ['Keep the threshold tight'], reasoning: 'Agreed, tightly', counterProposal: { rootCause: 'An outside spike', proposedConditions: conditions } });
    await fleet.must(agentId, 'SubmitSynthesis', { sessionId, round: 1, rootCause: 'An outside spike', proposedConditions: conditions, reasoning: 'Agreed', agrees: true });
    await fleet.must(reviewer, 'SubmitSynthesis', { sessionId, round: 2, rootCause: 'An outside spike', proposedConditions: conditions, reasoning: 'Agreed', agrees: true });
    const proposed = await until(`the resolution of ${sessionId}`, async () => {
      const s = await query('GetDialecticSession', { sessionId });
      return s?.proposed ? s : undefined;
    }, 60_000);
    return { agentId, sessionId, reviewer, payload: proposed.proposed.payload };
  });
  await atOnce(
    recoveries.flatMap((r) => [r.agentId, r.reviewer].map((signer) => ({ ...r, signer }))),
    ({ sessionId, signer, payload }) =>
      fleet.send(signer, 'SignResolution', { sessionId, publicKey: fleet.publicKeyOf(signer), signature: signResolution(payload, signer, fleet.secretKeyOf(signer)) }).then(keep(`${signer} signing ${sessionId}`)),
  );
  console.log(`races: ${recoveries.length * 2} signatures of ${recoveries.length} resolutions sent at once`);

  // One envelope, ten times at once, for each round.
  const envelopes = Array.from({ length: ROUNDS }, (_, i) =>
    createSignedCommand({ type: 'CreateVotingSession', actor: 'racer-exec', payload: { requestId: `race-${run}-e${i}`, actionType: 'deploy_production', riskLevel: 'high', summary: 'Sent ten times' }, secretKey: fleet.secretKeyOf('racer-exec') }),
  );
  const copies = await atOnce(
    envelopes.flatMap((envelope) => Array.from({ length: 10 }, () => envelope)),
    async (envelope) => {
      const res = await globalThis.fetch(`${fleet.url}/v1/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(envelope) });
      return { commandId: envelope.commandId, reply: keep(`copy of ${envelope.commandId}`)(await res.json()) };
    },
  );
  console.log(`races: ${envelopes.length} envelopes sent ten times each at once`);

  // The read models catch up with the decisions before the log is read (the reactions come first).
  await atOnce(proposals, (id) => until(`${id} approved`, async () => ((await query('GetProposal', { proposalId: id }))?.status === 'approved' ? true : undefined), 60_000).catch(() => undefined));
  await atOnce(sessions, (id) => until(`${id} decided`, async () => ((await query('GetVotingSession', { sessionId: id }))?.recommendation ? true : undefined), 60_000).catch(() => undefined));
  await atOnce(recoveries, (r) => until(`${r.agentId} resumed`, async () => ((await query('GetAgent', { agentId: r.agentId }))?.breaker?.state === 'closed' ? true : undefined), 60_000).catch(() => undefined));
  return { proposals, sessions, recoveries, envelopes, copies, refusals };
}

/** Events of the log by type, for the streams whose id ends with each of `ids`. */
function countsBy(events, ids, types) {
  const byId = new Map(ids.map((id) => [id, Object.fromEntries(types.map((t) => [t, 0]))]));
  for (const event of events) {
    const id = event.streamId.slice(event.streamId.indexOf('-') + 1);
    const counts = byId.get(id);
    if (counts && event.type in counts) counts[event.type]++;
  }
  return byId;
}

async function main() {
  console.log(`Cluster races: ${ROUNDS} aggregates of each kind raced at once; ${replicas} processes per service`);
  const { urls, passwords, shared } = await startCluster(group, { dir, natsPort, replicas, nats, gatewayPort, metricsPort: 0, log: (line) => console.log(`races: ${line}`) });
  const run = Date.now().toString(36);
  const fleet = Fleet.fromOperatorKeyFile(`http://127.0.0.1:${gatewayPort}`, shared.keyFile, dir, (line) => console.log(`races: ${line}`));
  await fleet.enlist(cast(run));
  const started = Date.now();
  const raced = await races(fleet, run);
  console.log(`races: every race sent and settled in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  // The log, read back as the auditor user.
  const store = await openJetStreamEventStore({ servers: urls, credentials: { user: 'auditor', pass: passwords.auditor }, logger: { warn: () => undefined } });
  const events = [];
  try {
    for await (const event of store.readAll()) events.push(event);
  } finally {
    await store.close();
  }
  const once = (counts, type) => [...counts.values()].filter((c) => c[type] === 1).length;
  const reviews = countsBy(events, raced.proposals, ['ReviewSubmitted', 'ReviewRoundClosed', 'ProposalApproved', 'ProposalRejected', 'ProposalEscalated']);
  const votes = countsBy(events, raced.sessions, ['ValidatorVoteReceived', 'VotingSessionDecided']);
  const recoveries = countsBy(
    events,
    raced.recoveries.map((r) => r.sessionId),
    ['ResolutionSigned', 'RecoveryResolved'],
  );
  const envelopeIds = new Set(raced.envelopes.map((e) => e.commandId));
  const commits = new Map();
  for (const event of events) {
    const id = event.metadata?.['commandId'];
    if (envelopeIds.has(id) && event.type === 'VotingSessionCreated') commits.set(id, (commits.get(id) ?? 0) + 1);
  }
  const decisions = new Map(events.filter((e) => e.type === 'VotingSessionDecided').map((e) => [e.streamId.slice(e.streamId.indexOf('-') + 1), e.data.recommendation?.decision]));
  const figures = {
    rounds: ROUNDS,
    reviews: {
      proposals: raced.proposals.length,
      allFourReviews: [...reviews.values()].filter((c) => c.ReviewSubmitted === 4).length,
      roundClosedOnce: once(reviews, 'ReviewRoundClosed'),
      approvedOnce: once(reviews, 'ProposalApproved'),
      rejectedOrEscalated: [...reviews.values()].filter((c) => c.ProposalRejected + c.ProposalEscalated > 0).length,
    },
    votes: {
      sessions: raced.sessions.length,
      decidedOnce: once(votes, 'VotingSessionDecided'),
      approved: raced.sessions.filter((id) => decisions.get(id) === 'approve').length,
    },
    signatures: {
      recoveries: raced.recoveries.length,
      bothSignedOnce: [...recoveries.values()].filter((c) => c.ResolutionSigned === 2).length,
      resolvedOnce: once(recoveries, 'RecoveryResolved'),
    },
    envelope: {
      envelopes: raced.envelopes.length,
      storedOnce: raced.envelopes.filter((e) => commits.get(e.commandId) === 1).length,
      repliesOk: raced.copies.filter((c) => c.reply.ok).length,
      repliesNotDuplicate: raced.copies.filter((c) => c.reply.ok && c.reply.result.duplicate === false).length,
    },
    refusals: raced.refusals.length,
  };
  console.log(`races: result ${JSON.stringify(figures)}`);
  for (const line of raced.refusals.slice(0, 5)) console.log(`races: refused ${line}`);

  const audit = await auditLog(shared);
  const findings = audit.report?.findings?.length;
  console.log(`races: audit exit ${audit.code}${audit.report ? `, ${findings} findings` : ''}${audit.code === 0 ? '' : `\n${audit.tail}`}`);

  const r = figures;
  const failed = [
    r.reviews.roundClosedOnce !== r.reviews.proposals && 'a review round closed other than once',
    r.reviews.approvedOnce !== r.reviews.proposals && 'a proposal approved other than once',
    r.votes.decidedOnce !== r.votes.sessions && 'a voting session decided other than once',
    r.votes.approved !== r.votes.sessions && 'a voting session not decided approve',
    r.signatures.bothSignedOnce !== r.signatures.recoveries && 'a resolution not signed once by each',
    r.signatures.resolvedOnce !== r.signatures.recoveries && 'a recovery resolved other than once',
    r.envelope.storedOnce !== r.envelope.envelopes && 'an envelope stored other than once',
    r.envelope.repliesOk !== r.envelope.envelopes * 10 && 'a copy of an envelope not answered ok',
    r.refusals > 0 && 'commands refused',
    unexpected.length > 0 && `processes exited unasked: ${unexpected.join(', ')}`,
    audit.code !== 0 && `the audit exited ${audit.code}`,
  ].filter(Boolean);
  if (failed.length > 0) {
    console.log(`races: FAILED: ${failed.join('; ')}`);
    return 1;
  }
  console.log(`races: every race decided exactly once, as the inputs say; the audit found nothing`);
  return 0;
}

await runClusterProgram('races', group, main, { dir, remove: ownDir && !values.keep });
