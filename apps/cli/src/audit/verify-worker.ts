/** A worker thread of the audit's SignatureVerifier: checks a batch of signatures and hashes a batch of commits, answers with the results in order (and the time they took, by stage). */
import { parentPort, workerData } from 'node:worker_threads';
import { noStageTimes } from './stages.js';
import { KeyCache, runTask, type BatchAnswer, type HashTask, type VerifyTask } from './verifier.js';

const keys = new KeyCache();
const timedRun = (workerData as { timed?: boolean } | undefined)?.timed === true;
parentPort?.on('message', (tasks: (VerifyTask | HashTask)[]) => {
  const times = noStageTimes();
  const answer: BatchAnswer = { answers: tasks.map((task) => runTask(task, keys, timedRun ? times : undefined)), times };
  parentPort!.postMessage(answer);
});
