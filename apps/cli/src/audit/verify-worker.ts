/** A worker thread of the audit's SignatureVerifier: checks a batch of signatures and hashes a batch of commits (tasks.ts), answers with the results in order (and the time they took, by stage). */
import { parentPort, workerData } from 'node:worker_threads';
import { noStageTimes } from './stages.js';
import { CheckContext, decodeJob, type WireBatch } from './tasks.js';
import type { BatchAnswer } from './verifier.js';

const timedRun = (workerData as { timed?: boolean } | undefined)?.timed === true;
const context = new CheckContext(timedRun ? noStageTimes() : undefined);
parentPort?.on('message', ({ jobs, bytes }: WireBatch) => {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const answers = jobs.map((wire) => {
    const job = decodeJob(wire, buffer, context.times);
    return 'invalid' in job ? false : context.run(job);
  });
  const answer: BatchAnswer = { answers, times: context.times ?? noStageTimes() };
  parentPort!.postMessage(answer);
  if (context.times) Object.assign(context.times, noStageTimes());
});
