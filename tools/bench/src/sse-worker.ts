/**
 * The SSE clients of a load run, on a thread of their own: parsing a thousand streams keeps a
 * thread busy, and the main thread must stay free to time /health and the commands fairly.
 */
import { Agent } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { type FromWorker, SseClient, type ToWorker, type WorkerSetup } from './sse-clients.js';

const setup = workerData as WorkerSetup;
const port = parentPort!;
const post = (message: FromWorker) => port.postMessage(message);
const agent = new Agent({ keepAlive: true, maxSockets: setup.kinds.length + 16 });
const clients = setup.kinds.map((kind, i) => new SseClient(setup.url, kind, setup.history, agent, setup.pauses[i] ?? 0));

await Promise.all(clients.map((c) => c.open()));
post({ type: 'opened' });

port.on('message', (message: ToWorker) => {
  if (message.type === 'poll') {
    const done = clients.every((c) => c.result.error !== undefined || (c.historyDone && c.tail.length >= (c.kind === 'replay' ? message.replayTail : message.liveTail)));
    post({ type: 'progress', done });
  } else if (message.type === 'finish') {
    for (const c of clients) c.close();
    post({ type: 'results', results: clients.map((c) => c.result), tails: clients.map((c) => c.tail), historyDone: clients.map((c) => c.historyDone) });
  } else {
    void baseline(message.timeoutMs).then((ms) => post({ type: 'baseline', ms }));
  }
});

/** One client replaying the history alone: ms until it had every event. */
async function baseline(timeoutMs: number): Promise<number | undefined> {
  const alone = new SseClient(setup.url, 'replay', setup.history, agent);
  await alone.open();
  const deadline = performance.now() + timeoutMs;
  while (!alone.historyDone && alone.result.error === undefined && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  alone.close();
  return alone.result.historyMs;
}
