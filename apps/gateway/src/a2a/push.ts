/**
 * A2A push notifications: every update of a task POSTed to the webhooks its caller registered
 * (tasks/pushNotificationConfig/set, or the configuration of message/send), with the protocol's
 * authentication (`Authorization: <scheme> <credentials>` of the config's AuthenticationInfo, or
 * its token as X-A2A-Notification-Token), in the body shape of the protocol version the webhook was
 * registered over. Never in Agora's way, nor in another caller's: each caller has a bounded queue
 * of its own and a bounded number of deliveries under way, one delivery at a time per webhook in
 * order, retried with exponential back-off; when a caller's queue is full its own oldest waiting
 * update is dropped and said in the log. Webhooks are where PushTargets allows (push-target.ts), a
 * task has a bounded number of them and a caller too (PushConfigs), and a task whose caller lost
 * its right (disabled, its key or roles changed) pushes nothing more (`revoke`). Two gateways that
 * follow one task (one opened it, another adopted it) push each of its follower's updates once: the
 * first to claim it in the shared records does (`claim`).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { StreamResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import {
  V1PushNotificationSerializer,
  type PushNotificationSerializer,
  type PushNotificationSender,
  type PushNotificationStore,
  type ServerCallContext,
  type StoredPushNotificationConfig,
} from '@a2a-js/sdk/server';
import type { ErrorCode } from '@agora/contracts';
import { backoffDelay, sleep } from '@agora/eventstore';
import type { LoggerService } from '@nestjs/common';
import { loggable } from './loggable.js';
import { FileRecords, type SharedRecords } from './push-store.js';
import { PushTargetRefused, PushTargets } from './push-target.js';
import { DEFAULT_A2A_PUSH_CONFIG_TTL_MS } from './settings.js';
import { scopeOf } from './task-store.js';

export interface PushOptions {
  /** Updates waiting to be delivered, one caller's (default 100): past that its own oldest is dropped. */
  maxQueuedPerCaller?: number;
  /** Updates waiting in all (default 1,000): past that the oldest of the caller holding the most is dropped. */
  maxQueued?: number;
  /** Deliveries under way at once for one caller (default 4). */
  deliveriesPerCaller?: number;
  /** Attempts per update and webhook (default 5). */
  attempts?: number;
  /** First retry after this long, doubling up to 30 s (default 500 ms). */
  initialDelayMs?: number;
  /** Timeout of one POST (default 5 s). */
  timeoutMs?: number;
  /** Where webhooks may be (default: https on public addresses only). */
  targets?: PushTargets;
  logger: Pick<LoggerService, 'warn'>;
}

interface Delivery {
  url: string;
  headers: Record<string, string>;
  body: string;
  taskId: string;
  caller: string;
}

const SERIALIZERS: Record<string, PushNotificationSerializer> = { '1.0': new V1PushNotificationSerializer(), '0.3': new V03PushNotificationSerializer() };

/** A refusal of a JSON-RPC request, with Agora's error code first in its message and in its metadata. */
export const a2aRefusal = (code: ErrorCode, message: string) => new RequestMalformedError({ message: `${code}: ${message}`, metadata: { code } });

/** The update's task id (a status or artifact update, or the task itself). */
function taskIdOf(response: StreamResponse): string {
  const payload = response.payload;
  if (payload?.$case === 'task') return payload.value.id;
  return payload?.value.taskId ?? '';
}

/** How long the push configurations of a task that ended are kept at most, by default: an hour (nothing is pushed for it any more). */
const PUSH_CONFIG_AFTER_END_MS = 60 * 60_000;

/** The wire version of a config set over a request that names none (the SDK's in-memory store's default). */
const LEGACY_WIRE_VERSION = '0.3';

/** A push configuration as the records keep it: until `expiresAt` (ms since the epoch). */
interface KeptConfig extends StoredPushNotificationConfig {
  expiresAt: number;
}

/** A part of a record's key: any text, in letters, digits, `-` and `_`. */
const keyPart = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');
/** The keys of a caller's configurations, of one task's, and a task's revocation. */
const callerPrefix = (scope: string): string => `cfg.${keyPart(scope)}.`;
const taskPrefix = (scope: string, taskId: string): string => `${callerPrefix(scope)}${keyPart(taskId)}.`;
const revokedKey = (scope: string, taskId: string): string => `rev.${keyPart(scope)}.${keyPart(taskId)}`;
const sentKey = (scope: string, taskId: string, update: string): string => `sent.${keyPart(scope)}.${keyPart(taskId)}.${createHash('sha256').update(update).digest('base64url')}`;

/**
 * What makes an update the same on every gateway that follows its task (a task one replica opened
 * and another adopted is followed by both): a follower's status, by its state and the aggregate's
 * progress, and the outcome. Undefined for the rest, which only the gateway a request reached sends.
 */
export function updateOnEveryFollower(response: StreamResponse): string | undefined {
  const payload = response.payload;
  if (payload?.$case === 'artifactUpdate') return `artifact:${payload.value.artifact?.artifactId ?? ''}`;
  if (payload?.$case !== 'statusUpdate') return undefined;
  const progress = (payload.value.metadata?.['agora'] as { progress?: unknown } | undefined)?.progress;
  return typeof progress === 'string' ? `status:${payload.value.status?.state ?? ''}:${progress}` : undefined;
}

/**
 * The push configurations of tasks, kept in records every gateway replica shares (push-store.ts),
 * each until `ttlMs` after it was last set, or `afterEndMs` after its task ended if that comes first; bounded per task and per caller, each webhook checked
 * where it goes before it is kept; a revoked task takes none, on any replica.
 */
export class PushConfigs implements PushNotificationStore {
  /** Tasks revoked here: known at once, without reading the records (a delivery under way stops). */
  private readonly revoked = new Set<string>();
  private readonly ttlMs: number;

  private readonly afterEndMs: number;

  /** `ttlMs`: a configuration's life after it was last set; `afterEndMs`: the most it is kept once its task ended (default an hour). */
  constructor(
    private readonly targets: PushTargets,
    private readonly bounds: { perTask: number; perCaller: number; ttlMs?: number; afterEndMs?: number },
    private readonly records: SharedRecords = FileRecords.inMemory(),
  ) {
    this.ttlMs = bounds.ttlMs ?? DEFAULT_A2A_PUSH_CONFIG_TTL_MS;
    this.afterEndMs = Math.min(this.ttlMs, bounds.afterEndMs ?? PUSH_CONFIG_AFTER_END_MS);
  }

  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    const scope = scopeOf(context);
    if (this.revoked.has(taskId) || (await this.revokedElsewhere(scope, taskId))) throw a2aRefusal('forbidden', `task ${taskId} pushes nothing more: its caller's credential changed`);
    try {
      await this.targets.check(config.url);
    } catch (error) {
      if (error instanceof PushTargetRefused) throw a2aRefusal('forbidden', error.message);
      throw error;
    }
    if (!config.id) config.id = randomUUID();
    const prefix = taskPrefix(scope, taskId);
    const key = `${prefix}${keyPart(config.id)}`;
    const held = await this.kept(callerPrefix(scope));
    if (!held.has(key)) {
      const ofTask = [...held.keys()].filter((k) => k.startsWith(prefix)).length;
      if (ofTask >= this.bounds.perTask) throw a2aRefusal('too_many_sessions', `task ${taskId} has ${ofTask} push configurations, the most a task may have: delete one first`);
      if (held.size >= this.bounds.perCaller) throw a2aRefusal('too_many_sessions', `this caller has ${held.size} push configurations, the most one caller may have: delete one first`);
    }
    const kept: KeptConfig = { config: structuredClone(config), wireVersion: context.requestedVersion || LEGACY_WIRE_VERSION, expiresAt: Date.now() + this.ttlMs };
    await this.records.put(key, JSON.stringify(kept));
  }

  async load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return (await this.loadWithMetadata(taskId, context)).map((stored) => stored.config);
  }

  async loadWithMetadata(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    return [...(await this.kept(taskPrefix(scopeOf(context), taskId))).values()].map(({ config, wireVersion }) => ({ config: { ...config, authentication: config.authentication ?? undefined }, wireVersion }));
  }

  async delete(taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    await this.records.delete(`${taskPrefix(scopeOf(context), taskId)}${keyPart(configId ?? taskId)}`);
  }

  /** Forgets a task's configurations, and takes no more for it (on any replica, until the configurations' own expiry). */
  async revoke(taskId: string, context: ServerCallContext): Promise<void> {
    this.revoked.add(taskId);
    const scope = scopeOf(context);
    await this.records.put(revokedKey(scope, taskId), JSON.stringify({ expiresAt: Date.now() + this.ttlMs }));
    for (const key of (await this.records.list(taskPrefix(scope, taskId))).keys()) await this.records.delete(key);
  }

  /** Forgets the task (ended and forgotten): its configurations go, and its id is no longer remembered as revoked. */
  async forget(taskId: string, context: ServerCallContext): Promise<void> {
    const scope = scopeOf(context);
    for (const key of (await this.records.list(taskPrefix(scope, taskId))).keys()) await this.records.delete(key);
    await this.records.delete(revokedKey(scope, taskId));
    this.revoked.delete(taskId);
  }

  /** The task ended (its last update was pushed): its configurations are kept `afterEndMs` more at most, for a client to list them. */
  async ended(taskId: string, context: ServerCallContext): Promise<void> {
    const until = Date.now() + this.afterEndMs;
    for (const [key, kept] of await this.kept(taskPrefix(scopeOf(context), taskId))) if (kept.expiresAt > until) await this.records.put(key, JSON.stringify({ ...kept, expiresAt: until }));
  }

  /**
   * Claims the pushing of an update that every follower of the task sends (updateOnEveryFollower):
   * true for the first gateway to claim it, false for the others, which push nothing of it.
   */
  async claim(taskId: string, context: ServerCallContext, update: string): Promise<boolean> {
    // Records of this process alone (a data directory, memory): no other gateway follows its tasks.
    if (!this.records.shared) return true;
    return this.records.create(sentKey(scopeOf(context), taskId, update), JSON.stringify({ expiresAt: Date.now() + this.ttlMs }));
  }

  isRevoked(taskId: string): boolean {
    return this.revoked.has(taskId);
  }

  /** Removes the expired configurations, revocations and claims of every caller (the bucket's max age does it too; a file has only this). */
  async prune(): Promise<void> {
    for (const kind of ['cfg.', 'rev.', 'sent.']) await this.kept(kind);
  }

  /** Whether another replica (or this one before a restart) revoked the task, and the revocation has not expired. */
  private async revokedElsewhere(scope: string, taskId: string): Promise<boolean> {
    const text = await this.records.get(revokedKey(scope, taskId));
    return text !== undefined && (JSON.parse(text) as { expiresAt: number }).expiresAt > Date.now();
  }

  /** The records under a prefix that have not expired; an expired one is deleted as it is met. */
  private async kept(prefix: string): Promise<Map<string, KeptConfig>> {
    const found = await this.records.list(prefix);
    const kept = new Map<string, KeptConfig>();
    const now = Date.now();
    for (const [key, text] of found) {
      const record = JSON.parse(text) as KeptConfig;
      if (record.expiresAt > now) kept.set(key, record);
      else await this.records.delete(key);
    }
    return kept;
  }
}

export class PushQueue implements PushNotificationSender {
  /** Waiting deliveries by caller, oldest first. */
  private readonly queues = new Map<string, Delivery[]>();
  /** Webhooks (by caller) with a delivery under way. */
  private readonly busy = new Set<string>();
  /** Deliveries under way by caller. */
  private readonly running = new Map<string, number>();
  /** The latest update of each task being queued (its configurations read, its claim made). */
  private readonly sending = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();
  private readonly targets: PushTargets;
  /** Deliveries made (2xx), for the tests and the log. */
  delivered = 0;

  constructor(
    private readonly store: PushNotificationStore & { isRevoked?(taskId: string): boolean; claim?(taskId: string, context: ServerCallContext, update: string): Promise<boolean> },
    private readonly options: PushOptions,
  ) {
    this.targets = options.targets ?? new PushTargets();
  }

  /** Queues the update for every webhook of its task; returns at once. */
  async send(response: StreamResponse, context: ServerCallContext, task?: Task): Promise<void> {
    const taskId = taskIdOf(response);
    if (taskId === '' || this.stopping.signal.aborted || this.store.isRevoked?.(taskId)) return;
    // A task's updates are queued in the order they are sent, whatever its configurations take to read.
    const turn = (this.sending.get(taskId) ?? Promise.resolve()).catch(() => undefined).then(() => this.queueUpdate(taskId, response, context, task));
    this.sending.set(taskId, turn);
    try {
      await turn;
    } finally {
      if (this.sending.get(taskId) === turn) this.sending.delete(taskId);
    }
  }

  /** Queues an update for every webhook of its task. */
  private async queueUpdate(taskId: string, response: StreamResponse, context: ServerCallContext, task: Task | undefined): Promise<void> {
    const caller = scopeOf(context);
    const configs = this.store.loadWithMetadata ? await this.store.loadWithMetadata(taskId, context) : (await this.store.load(taskId, context)).map((config) => ({ config, wireVersion: '1.0' }));
    if (configs.length === 0) return;
    // An update every follower of the task sends is pushed by the first to claim it.
    const everywhere = updateOnEveryFollower(response);
    if (everywhere !== undefined && this.store.claim !== undefined && !(await this.store.claim(taskId, context, everywhere))) return;
    for (const { config, wireVersion } of configs) {
      const { body, contentType } = (SERIALIZERS[wireVersion] ?? SERIALIZERS['1.0']!).serialize(response, task);
      const headers: Record<string, string> = { 'content-type': contentType };
      if (config.authentication?.scheme && config.authentication.credentials) headers['authorization'] = `${config.authentication.scheme} ${config.authentication.credentials}`;
      else if (config.token) headers['x-a2a-notification-token'] = config.token;
      this.enqueue({ url: config.url, headers, body, taskId, caller });
    }
    this.pump();
  }

  /** Drops what waits for a task (its caller lost its right): nothing more of it is delivered. */
  drop(taskId: string): void {
    for (const [caller, queue] of this.queues) {
      const kept = queue.filter((d) => d.taskId !== taskId);
      if (kept.length === 0) this.queues.delete(caller);
      else this.queues.set(caller, kept);
    }
  }

  private enqueue(delivery: Delivery): void {
    let queue = this.queues.get(delivery.caller);
    if (queue === undefined) this.queues.set(delivery.caller, (queue = []));
    if (queue.length >= (this.options.maxQueuedPerCaller ?? 100)) this.dropOldest(queue, 'the caller\'s own');
    else if (this.waiting >= (this.options.maxQueued ?? 1_000)) {
      // All queues together are full: the caller holding the most gives up its oldest.
      const largest = [...this.queues.values()].reduce((a, b) => (b.length > a.length ? b : a));
      this.dropOldest(largest, 'all callers\'');
    }
    queue.push(delivery);
  }

  private dropOldest(queue: Delivery[], why: string): void {
    const dropped = queue.shift();
    if (dropped) this.options.logger.warn(`A2A push queue full (${why}): an update of task ${dropped.taskId} to ${loggable(dropped.url)} was dropped`);
  }

  private get waiting(): number {
    let count = 0;
    for (const queue of this.queues.values()) count += queue.length;
    return count;
  }

  /** Starts a delivery for every webhook not busy (updates to one webhook go in order), each caller within its own share. */
  private pump(): void {
    for (const [caller, queue] of this.queues) {
      for (let i = 0; i < queue.length && (this.running.get(caller) ?? 0) < (this.options.deliveriesPerCaller ?? 4); ) {
        const delivery = queue[i]!;
        const key = `${caller}\u0000${delivery.url}`;
        if (this.busy.has(key)) {
          i++;
          continue;
        }
        queue.splice(i, 1);
        this.busy.add(key);
        this.running.set(caller, (this.running.get(caller) ?? 0) + 1);
        void this.deliver(delivery).finally(() => {
          this.busy.delete(key);
          const left = (this.running.get(caller) ?? 1) - 1;
          if (left === 0) this.running.delete(caller);
          else this.running.set(caller, left);
          this.pump();
        });
      }
      if (queue.length === 0) this.queues.delete(caller);
    }
  }

  private async deliver(delivery: Delivery): Promise<void> {
    const attempts = this.options.attempts ?? 5;
    let failure = '';
    let made = 0;
    const url = new URL(delivery.url);
    for (let attempt = 1; attempt <= attempts && !this.stopping.signal.aborted && !this.store.isRevoked?.(delivery.taskId); attempt++) {
      made = attempt;
      try {
        const status = await this.targets.post(url, delivery.headers, delivery.body, AbortSignal.any([AbortSignal.timeout(this.options.timeoutMs ?? 5_000), this.stopping.signal]));
        if (status >= 200 && status < 300) {
          this.delivered++;
          return;
        }
        failure = `HTTP ${status}`;
      } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
        if (error instanceof PushTargetRefused) break;
      }
      if (attempt < attempts) await sleep(backoffDelay(attempt, { initialDelayMs: this.options.initialDelayMs ?? 500, maxDelayMs: 30_000 }), this.stopping.signal).catch(() => undefined);
    }
    if (!this.stopping.signal.aborted) this.options.logger.warn(`A2A push to ${loggable(delivery.url)} for task ${loggable(delivery.taskId)} given up after ${made} attempts: ${loggable(failure)}`);
  }

  /** Stops delivering: what waits is dropped, a delivery under way is aborted. */
  close(): void {
    this.stopping.abort();
    this.queues.clear();
  }

  get pending(): number {
    let running = 0;
    for (const count of this.running.values()) running += count;
    return this.waiting + running;
  }
}
