// The audit's signature checks: one check answers the same signed bytes seen again (a command's id
// reservation, then its commit), never bytes that differ, a key that differs or a signature that differs.
import { createSignedCommand, generateKeyPair, signingBytes } from '@agora/identity';
import { SignatureVerifier, type VerifyTask } from '../src/audit/verifier.js';

const signer = generateKeyPair();
const other = generateKeyPair();
const { signature, ...unsigned } = createSignedCommand({ type: 'ReportHealth', actor: 'ada', payload: { agentId: 'ada', health: 0.9, risk: 0.1 }, secretKey: signer.secretKey });
const task: VerifyTask = { bytes: signingBytes(unsigned), publicKey: signer.publicKey, signature };
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
    const edited = signingBytes({ ...unsigned, payload: { agentId: 'ada', health: 0.1, risk: 0.9 } });
    expect(
      await answers([
        task,
        { ...task, bytes: Buffer.from(task.bytes) },
        { ...task, bytes: edited },
        { ...task, publicKey: other.publicKey },
        task,
        { ...task, signature: tampered },
      ]),
    ).toEqual([true, true, false, false, true, false]);
  });

  it('does not let a forged first check make the same bytes valid later', async () => {
    const forged = { ...task, signature: tampered };
    expect(await answers([forged, { ...forged, bytes: Buffer.from(forged.bytes) }, task])).toEqual([false, false, true]);
  });
});
