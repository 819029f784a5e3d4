/** A worker thread of the audit's SignatureVerifier: checks a batch of signatures and hashes a batch of commits, answers with the results in order. */
import { parentPort } from 'node:worker_threads';
import { KeyCache, runTask, type HashTask, type VerifyTask } from './verifier.js';

const keys = new KeyCache();
parentPort?.on('message', (tasks: (VerifyTask | HashTask)[]) => {
  parentPort!.postMessage(tasks.map((task) => runTask(task, keys)));
});
