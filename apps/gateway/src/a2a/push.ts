/**
 * A2A push notifications: every update of a task POSTed to the webhooks its caller registered
 * (tasks/pushNotificationConfig/set, or the configuration of message/send), with the protocol's
 * authentication (`Authorization: <scheme> <credentials>` of the config's AuthenticationInfo, or
 * its token as X-A2A-Notification-Token), in the body shape of the protocol version the webhook was
 * registered over. Never in Agora's way: a bounded queue, one delivery at a time per webhook in
 * order, retried with exponential back-off; when the queue is full the oldest waiting update is
 * dropped and said in the log.
 */
import type { StreamResponse, Task } from '@a2a-js/sdk';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { V1PushNotificationSerializer, type PushNotificationSerializer, type PushNotificationSender, type PushNotificationStore, type ServerCallContext } from '@a2a-js/sdk/server';
import { backoffDelay, sleep } from '@agora/eventstore';
import type { LoggerService } from '@nestjs/common';

export interface PushOptions {
  /** Updates waiting to be delivered, all webhooks together (default 1,000). */
  maxQueued?: number;
  /** Attempts per update and webhook (default 5). */
  attempts?: number;
  /** First retry after this long, doubling up to 30 s (default 500 ms). */
  initialDelayMs?: number;
  /** Timeout of one POST (default 5 s). */
  timeoutMs?: number;
  logger: Pick<LoggerService, 'warn'>;
}

interface Delivery {
  url: string;
  headers: Record<string, string>;
  body: string;
  taskId: string;
}

const SERIALIZERS: Record<string, PushNotificationSerializer> = { '1.0': new V1PushNotificationSerializer(), '0.3': new V03PushNotificationSerializer() };

/** The update's task id (a status or artifact update, or the task itself). */
function taskIdOf(response: StreamResponse): string {
  const payload = response.payload;
  if (payload?.$case === 'task') return payload.value.id;
  return payload?.value.taskId ?? '';
}

export class PushQueue implements PushNotificationSender {
  private readonly queue: Delivery[] = [];
  private readonly busy = new Set<string>();
  private readonly stopping = new AbortController();
  private running = 0;
  /** Deliveries made (2xx), for the tests and the log. */
  delivered = 0;

  constructor(
    private readonly store: PushNotificationStore,
    private readonly options: PushOptions,
  ) {}

  /** Queues the update for every webhook of its task; returns at once. */
  async send(response: StreamResponse, context: ServerCallContext, task?: Task): Promise<void> {
    const taskId = taskIdOf(response);
    if (taskId === '' || this.stopping.signal.aborted) return;
    const configs = this.store.loadWithMetadata ? await this.store.loadWithMetadata(taskId, context) : (await this.store.load(taskId, context)).map((config) => ({ config, wireVersion: '1.0' }));
    for (const { config, wireVersion } of configs) {
      const { body, contentType } = (SERIALIZERS[wireVersion] ?? SERIALIZERS['1.0']!).serialize(response, task);
      const headers: Record<string, string> = { 'content-type': contentType };
      if (config.authentication?.scheme && config.authentication.credentials) headers['authorization'] = `${config.authentication.scheme} ${config.authentication.credentials}`;
      else if (config.token) headers['x-a2a-notification-token'] = config.token;
      if (this.queue.length >= (this.options.maxQueued ?? 1_000)) {
        const dropped = this.queue.shift()!;
        this.options.logger.warn(`A2A push queue full: an update of task ${dropped.taskId} to ${dropped.url} was dropped`);
      }
      this.queue.push({ url: config.url, headers, body, taskId });
    }
    this.pump();
  }

  /** Starts a delivery for every webhook not busy (updates to one webhook go in order). */
  private pump(): void {
    for (let i = 0; i < this.queue.length; ) {
      const delivery = this.queue[i]!;
      if (this.busy.has(delivery.url)) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      this.busy.add(delivery.url);
      this.running++;
      void this.deliver(delivery).finally(() => {
        this.busy.delete(delivery.url);
        this.running--;
        this.pump();
      });
    }
  }

  private async deliver(delivery: Delivery): Promise<void> {
    const attempts = this.options.attempts ?? 5;
    let failure = '';
    for (let attempt = 1; attempt <= attempts && !this.stopping.signal.aborted; attempt++) {
      try {
        const response = await fetch(delivery.url, { method: 'POST', headers: delivery.headers, body: delivery.body, signal: AbortSignal.any([AbortSignal.timeout(this.options.timeoutMs ?? 5_000), this.stopping.signal]) });
        await response.body?.cancel();
        if (response.ok) {
          this.delivered++;
          return;
        }
        failure = `HTTP ${response.status}`;
      } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
      }
      if (attempt < attempts) await sleep(backoffDelay(attempt, { initialDelayMs: this.options.initialDelayMs ?? 500, maxDelayMs: 30_000 }), this.stopping.signal).catch(() => undefined);
    }
    if (!this.stopping.signal.aborted) this.options.logger.warn(`A2A push to ${delivery.url} for task ${delivery.taskId} given up after ${attempts} attempts: ${failure}`);
  }

  /** Stops delivering: what waits is dropped, a delivery under way is aborted. */
  close(): void {
    this.stopping.abort();
    this.queue.length = 0;
  }

  get pending(): number {
    return this.queue.length + this.running;
  }
}
