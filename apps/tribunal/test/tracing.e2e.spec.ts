// One tribunal round, traced: registry, proposal and tribunal as separate processes over a NATS
// server of the test's own, each exporting its spans with the OpenTelemetry SDK's OTLP exporter
// (http/json) to a receiver in the test, as to a collector. The agent side (this test) traces with
// the SDK too, into its in-memory exporter. The round must come back as ONE connected trace: the
// agents' commands (traceparent in the NATS headers), the proposal service's append, the tribunal's
// reaction in another process (traceparent in the event's metadata), the reviews, and the deadline
// that closes the round for the reviewer who stayed silent. The rendered tree is kept in
// test-output/tracing/ (docs/tracing.md shows one).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetProposal, type ProposalView, type Reply } from '@agora/contracts';
import { openJetStreamEventStore, type EventStore } from '@agora/eventstore';
import { inSpan, useTracerProvider } from '@agora/tracing';
import { REPO_ROOT, renderTrace, REVIEWER_PROFILES, startOtlpReceiver, startServiceFleet, waitFor, type CollectedSpan, type OtlpReceiver, type ServiceFleet } from '@agora/testing';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';

const POLICY = { roundDeadlineMs: 120_000, minRoundDeadlineMs: 1_000, maxRoundsBeforeEscalation: 2 };
const ROUND_MS = 2_500;
const CAST = {
  seldon: { roles: ['executive'], constitutions: [] },
  ...REVIEWER_PROFILES,
} as const;
type Agent = keyof typeof CAST;
const SECRET_BODY = 'Ship the demo on Friday (payload text that must not reach a span)';

function collected(span: ReadableSpan): CollectedSpan {
  const toNs = ([s, ns]: [number, number]) => BigInt(s) * 1_000_000_000n + BigInt(ns);
  return {
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    name: span.name,
    kind: span.kind + 1,
    service: 'agent (test)',
    attributes: { ...span.attributes },
    startNs: toNs(span.startTime),
    endNs: toNs(span.endTime),
  };
}

describe('a tribunal round as one trace across processes (e2e)', () => {
  let fleet: ServiceFleet;
  let receiver: OtlpReceiver;
  let store: EventStore;
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

  const send = (agent: Agent, type: string, payload: Record<string, unknown>) => fleet.send(agent, type, payload);
  const ok = (agent: Agent, type: string, payload: Record<string, unknown>) => fleet.ok(agent, type, payload);
  /** Polling stays out of the round's trace. */
  const proposal = (proposalId: string) =>
    context.with(ROOT_CONTEXT, async () => {
      const reply = (await fleet.client.request(GetProposal.subject, { proposalId }, { timeoutMs: 10_000 })) as Reply<ProposalView>;
      return reply.ok ? reply.result : undefined;
    });

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    fleet = await startServiceFleet({
      label: 'tracing',
      env: () => ({
        AGORA_TRIBUNAL_POLICY: JSON.stringify(POLICY),
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
      }),
    });
    store = await openJetStreamEventStore({ servers: fleet.nats.url, streamName: fleet.log.streamName, subjectPrefix: fleet.log.subjectPrefix });
    provider.register();
    useTracerProvider(provider);
    await Promise.all(['registry', 'proposal'].map((service) => fleet.start(service)));
    await context.with(ROOT_CONTEXT, () => fleet.register(Object.fromEntries(Object.entries(CAST).map(([agentId, profile]) => [agentId, { roles: [...profile.roles], constitutions: [...profile.constitutions], trustScore: 500 }]))));
    // Started once every reviewer is registered: it draws reviewers from the registry as its process knows it.
    await fleet.start('tribunal');
  }, 180_000);

  afterAll(async () => {
    await store?.close();
    await fleet?.stop();
    useTracerProvider(undefined);
    await provider.shutdown();
    await receiver?.close();
  }, 60_000);

  it('submission, reaction, reviews and the deadline are one connected trace, without payloads', async () => {
    expect([...fleet.processes.values()].every((p) => /tracing: OTLP http\/json as service agora-/.test(p.output()))).toBe(true);
    let traceId = '';
    await inSpan('tribunal round', {}, async (span) => {
      traceId = span!.spanContext().traceId;
      await ok('seldon', 'SubmitProposal', { proposalId: 'traced', title: 'Plan traced', body: SECRET_BODY, problem: 'Space-OS needs users', evidence: [{ ref: 'brr/threads/004', summary: 'context' }], reviewDeadlineMs: ROUND_MS });
      await waitFor(async () => (await proposal('traced'))?.rounds[0]?.status === 'open', 'round 1 to open', 15_000);
      // A refused review is in the trace too, with its code.
      expect(await send('sentinel', 'SubmitReview', { proposalId: 'traced', round: 1, constitution: 'evidence', verdict: 'object', reasoning: 'vague' })).toMatchObject({ ok: false, error: { code: 'invalid_command' } });
      for (const [agent, constitution] of [['harbinger', 'risk'], ['heretic', 'premise'], ['sentinel', 'evidence']] as const) {
        await ok(agent, 'SubmitReview', { proposalId: 'traced', round: 1, constitution, verdict: 'approve', reasoning: `${agent} on ${constitution}` });
      }
    });
    // zealot stays silent: the tribunal's deadline closes the round, and the proposal is approved.
    await waitFor(async () => (await proposal('traced'))?.status === 'approved', 'the deadline to approve the proposal', 30_000);

    const deadline = (spans: CollectedSpan[]) => spans.find((s) => s.name === 'agora.deadline tribunal-rounds');
    const all = () => [...exporter.getFinishedSpans().map(collected), ...receiver.spans()].filter((s) => s.traceId === traceId);
    await waitFor(() => {
      const d = deadline(all());
      return d !== undefined && all().some((s) => s.parentSpanId === d.spanId);
    }, 'the deadline span and its command to be exported', 15_000);
    await new Promise((resolve) => setTimeout(resolve, 500)); // the last batches
    const spans = all();
    const byId = new Map(spans.map((s) => [s.spanId, s]));

    // Connected: one root (the agent's), every other span's parent is in the trace.
    const roots = spans.filter((s) => s.parentSpanId === undefined);
    expect(roots.map((s) => s.name)).toEqual(['tribunal round']);
    expect(spans.filter((s) => s.parentSpanId !== undefined && !byId.has(s.parentSpanId)).map((s) => `${s.service} ${s.name}`)).toEqual([]);
    // The registry's trust reactor reads these events too, but answers none of them: no span of its own.
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['agent (test)', 'agora-proposal', 'agora-tribunal']));

    // The command: client span (agent) -> server span (proposal) -> gate, decide, append.
    const submit = spans.find((s) => s.name === 'agora.command SubmitProposal')!;
    expect([submit.service, submit.kind, submit.attributes['agora.outcome'], submit.attributes['agora.command.type']]).toEqual(['agora-proposal', 2, 'ok', 'SubmitProposal']);
    expect(byId.get(submit.parentSpanId!)).toMatchObject({ service: 'agent (test)', name: expect.stringMatching(/^agora\.request agora\.cmd\.proposal\./) });
    const underSubmit = spans.filter((s) => s.parentSpanId === submit.spanId).map((s) => s.name);
    expect(underSubmit).toEqual(expect.arrayContaining(['agora.gate', 'agora.decide', 'agora.append']));
    const append = spans.find((s) => s.name === 'agora.append' && s.parentSpanId === submit.spanId)!;

    // The reaction, in the tribunal's process, continues from the proposal service's append (event metadata).
    const react = spans.find((s) => s.name === 'agora.react tribunal-rounds' && s.attributes['agora.event.type'] === 'ReviewRoundRequested')!;
    expect([react.service, react.parentSpanId]).toEqual(['agora-tribunal', append.spanId]);
    const open = spans.find((s) => s.parentSpanId === react.spanId)!;
    expect(open).toMatchObject({ name: 'agora.command OpenReviewRound', attributes: expect.objectContaining({ 'agora.command.internal': true, 'agora.outcome': 'appended' }) });

    // The refused review: its code on the server span and on the gate.
    const refused = spans.find((s) => s.name === 'agora.command SubmitReview' && s.attributes['agora.error.code'] === 'invalid_command')!;
    expect(refused.service).toBe('agora-tribunal');
    expect(spans.filter((s) => s.name === 'agora.command SubmitReview' && s.attributes['agora.outcome'] === 'ok')).toHaveLength(3);

    // The deadline continues from the append that set it (the round's opening), and closes the round.
    const fired = deadline(spans)!;
    const setBy = byId.get(fired.parentSpanId!)!;
    expect([setBy.name, byId.get(setBy.parentSpanId!)?.name]).toEqual(['agora.append', 'agora.command OpenReviewRound']);
    expect(spans.find((s) => s.parentSpanId === fired.spanId)).toMatchObject({ name: 'agora.command ExpireReviewRound', attributes: expect.objectContaining({ 'agora.outcome': 'appended' }) });

    // The log carries the trace context; no span carries the payload.
    const submitted = (await store.readStream('proposal-traced')).find((e) => e.type === 'ProposalSubmitted')!;
    expect(submitted.metadata['traceparent']).toBe(`00-${traceId}-${append.spanId}-01`);
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain('Ship the demo');

    const out = join(REPO_ROOT, 'test-output', 'tracing');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'tribunal-round.txt'), `${renderTrace(spans, ['agora.command.type', 'agora.actor', 'agora.outcome', 'agora.error.code', 'agora.event.type', 'agora.events', 'agora.stream.category', 'agora.deadline.key'])}\n`);
  }, 90_000);
});
