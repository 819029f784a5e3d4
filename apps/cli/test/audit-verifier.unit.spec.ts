// The audit's signature checks: one check answers the same signed envelope seen again (a command's id
// reservation, then its commit), never an envelope that differs, a key that differs or a signature that differs.
import type { StoredBytes } from '@agora/eventstore';
import { commitHash, createSignedCommand, envelopeOfMetadata, generateKeyPair, nextCommitLink } from '@agora/identity';
import { CheckContext, decodeJob, encodeBatch, verifyTaskOf, type Job } from '../src/audit/tasks.js';
import { SignatureVerifier, type HashTask, type VerifyTask } from '../src/audit/verifier.js';

const signer = generateKeyPair();
const other = generateKeyPair();
const { signature, ...unsigned } = createSignedCommand({ type: 'ReportHealth', actor: 'ada', payload: { agentId: 'ada', health: 0.9, risk: 0.1 }, secretKey: signer.secretKey });
const task: VerifyTask = { envelope: unsigned, publicKey: signer.publicKey, signature };
// One bit of R flipped: always a different, invalid signature (zeroing the last byte would not always
// differ, as the top byte of S is zero about one time in sixteen).
const raw = Buffer.from(signature, 'base64url');
raw.writeUInt8(raw.readUInt8(0) ^ 1, 0);
const tampered = raw.toString('base64url');

// On this thread (worker threads load the built verify-worker.js, which a unit test does not have).
describe('SignatureVerifier', () => {
  let verifier: SignatureVerifier;
  beforeEach(() => (verifier = new SignatureVerifier(0)));
  afterEach(() => verifier.close());

  const answers = async (tasks: VerifyTask[]): Promise<boolean[]> => {
    const results: boolean[] = [];
    for (const [i, t] of tasks.entries()) await verifier.submit(t, (valid) => (results[i] = valid));
    await verifier.drain();
    return results;
  };

  it('answers a signature seen again as the first check did, and checks anything that differs on its own', async () => {
    const edited = { ...unsigned, payload: { agentId: 'ada', health: 0.1, risk: 0.9 } };
    expect(
      await answers([
        task,
        { ...task, envelope: structuredClone(unsigned) },
        { ...task, envelope: edited },
        { ...task, publicKey: other.publicKey },
        task,
        { ...task, signature: tampered },
      ]),
    ).toEqual([true, true, false, false, true, false]);
  });

  it('checks on its own an envelope that differs deep in its payload', async () => {
    const payload = { sessionId: 's1', candidates: [{ agentId: 'ada', risk: 0.1, expertise: ['a'] }, { agentId: 'bob', risk: 0.2, expertise: [] }] };
    const { signature: signed, ...nested } = createSignedCommand({ type: 'OpenRecovery', actor: 'ada', payload, secretKey: signer.secretKey });
    const first: VerifyTask = { envelope: nested, publicKey: signer.publicKey, signature: signed };
    const edit = (change: (p: typeof payload) => void) => {
      const copy = structuredClone(nested) as typeof nested & { payload: typeof payload };
      change(copy.payload);
      return { ...first, envelope: copy };
    };
    expect(
      await answers([
        first,
        edit(() => undefined),
        edit((p) => (p.candidates[1]!.risk = 0.3)),
        edit((p) => p.candidates[0]!.expertise.push('b')),
        edit((p) => p.candidates.pop()),
        edit((p) => Object.assign(p.candidates[1]!, { extra: true })),
        edit((p) => Object.assign(p, { more: undefined })),
      ]),
    ).toEqual([true, true, false, false, false, false, true]);
  });

  it('hashes commits as read: the link the next commit carries, not that of an edited commit', async () => {
    const previous = [{ id: 'e1', type: 'AgentRegistered', data: { agentId: 'ada', roles: ['executive'] }, metadata: { commandId: 'c1' } }];
    const link = nextCommitLink('agent-ada', previous);
    const edited = [{ ...previous[0]!, data: { agentId: 'ada', roles: ['operator'] } }];
    const hashes: string[] = [];
    const tasks: HashTask[] = [{ commit: previous }, { commit: edited }, { commit: structuredClone(previous) }];
    for (const [i, t] of tasks.entries()) await verifier.submitHash(t, (hash) => (hashes[i] = hash));
    await verifier.drain();
    expect(hashes.map((hash) => hash === link)).toEqual([true, false, true]);
  });

  it('does not let a forged first check make the same bytes valid later', async () => {
    const forged = { ...task, signature: tampered };
    expect(await answers([forged, { ...forged, envelope: structuredClone(unsigned) }, task])).toEqual([false, false, true]);
  });
});

// What a worker thread is sent: the bytes the store holds of each commit, in one buffer a batch. Its
// answers are those of the same checks run on the values, for commits as written and as edited.
describe('a batch as a worker thread gets it', () => {
  /** Stored bytes as the embedded store hands them: each range is the JSON.stringify of the value. */
  const storedEvent = (event: { id: string; type: string; data: unknown; metadata: Record<string, unknown> }): StoredBytes => {
    const data = JSON.stringify(event.data);
    const bytes = Buffer.from(`{"d":${data},"m":${JSON.stringify(event.metadata)}}`);
    return { bytes, data: [5, 5 + Buffer.byteLength(data)], metadata: [5 + Buffer.byteLength(data) + 5, bytes.length - 1] };
  };
  const { signature: signed, ...body } = createSignedCommand({ type: 'ReportHealth', actor: 'ada', payload: { agentId: 'ada', health: 0.9, risk: 0.1 }, secretKey: signer.secretKey, commandId: 'c1', correlationId: 'c1' });
  const metadata = { commandId: body.commandId, commandType: body.type, actor: body.actor, issuedAt: body.issuedAt, correlationId: 'c1', commandPayload: body.payload, signature: signed };
  const event = { id: 'e1', type: 'AgentHealthReported', data: { agentId: 'ada', health: 0.9 }, metadata };
  const edited = { ...event, data: { agentId: 'ada', health: 0.1 }, metadata: { ...metadata, commandPayload: { ...body.payload, health: 0.1 } } };
  const jobsOf = (e: typeof event, publicKey: string, id: number): Job[] => {
    const stored = storedEvent(e);
    const found = envelopeOfMetadata(e.metadata);
    if ('reason' in found) throw new Error(found.reason);
    const verify = verifyTaskOf(found.envelope, publicKey, stored.bytes.subarray(stored.metadata[0], stored.metadata[1]));
    return [
      { id, verify },
      { hash: { commit: [{ id: e.id, type: e.type, data: e.data, metadata: e.metadata }], stored: [stored], payloadOf: id } },
    ];
  };

  it('answers as the checks on the values do', () => {
    const jobs = [...jobsOf(event, signer.publicKey, 1), ...jobsOf(event, other.publicKey, 2), ...jobsOf(edited, signer.publicKey, 3)];
    const direct = new CheckContext();
    const onValues = jobs.map((job) => direct.run(job));
    const { jobs: wire, bytes } = encodeBatch(jobs);
    const worker = new CheckContext();
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const onBytes = wire.map((w) => {
      const job = decodeJob(w, buffer);
      return 'invalid' in job ? false : worker.run(job);
    });
    expect(wire.every((w) => 'metadataAt' in w || 'commitAt' in w)).toBe(true);
    expect(onBytes).toEqual(onValues);
    expect(onValues.filter((answer) => typeof answer === 'boolean')).toEqual([true, false, false]);
    expect(onValues[1]).toBe(commitHash([event]));
    expect(onValues[5]).toBe(commitHash([edited]));
  });
});
