/** A worker thread of the audit's SignatureVerifier: checks a batch of signatures, answers with the results in order. */
import { parentPort } from 'node:worker_threads';
import { KeyCache, verifyTask, type VerifyTask } from './verifier.js';

const keys = new KeyCache();
parentPort?.on('message', (tasks: VerifyTask[]) => {
  parentPort!.postMessage(tasks.map((t) => verifyTask({ bytes: Buffer.from(t.bytes), ...(t.alternative ? { alternative: Buffer.from(t.alternative) } : {}), publicKey: t.publicKey, signature: t.signature }, keys)));
});
