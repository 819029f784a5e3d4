import { randomBytes } from 'node:crypto';
import { encodeJson, type WireConnection, type WireSubscription } from './wire.js';

/**
 * The NATS services API (ADR-32, "micro" v1), so `nats micro ls|info|stats` shows Agora's
 * services. Every replica answers on `$SRV.<VERB>`, `$SRV.<VERB>.<name>` and
 * `$SRV.<VERB>.<name>.<id>` for PING, INFO and STATS, outside any queue group: discovery wants
 * an answer from each replica. Written on plain subscriptions (no @nats-io/services dependency),
 * with the response shapes of the schemas at https://nats.io/schemas/micro/v1/.
 */

export interface ServiceEndpointConfig {
  /** Letters, digits, `_` or `-` (the micro schema). */
  name: string;
  subject: string;
  queueGroup: string;
  metadata?: Record<string, string>;
}

export interface ServiceApiConfig {
  name: string;
  /** Semantic version. */
  version: string;
  description: string;
  metadata?: Record<string, string>;
  endpoints: readonly ServiceEndpointConfig[];
}

export interface PingResponse {
  type: 'io.nats.micro.v1.ping_response';
  name: string;
  id: string;
  version: string;
  metadata: Record<string, string>;
}

export interface InfoResponse extends Omit<PingResponse, 'type'> {
  type: 'io.nats.micro.v1.info_response';
  description: string;
  endpoints: { name: string; subject: string; queue_group: string; metadata: Record<string, string> | null }[];
}

export interface EndpointStats {
  name: string;
  subject: string;
  queue_group: string;
  num_requests: number;
  num_errors: number;
  last_error: string;
  /** Nanoseconds, summed over every request. */
  processing_time: number;
  /** Nanoseconds. */
  average_processing_time: number;
}

export interface StatsResponse extends Omit<PingResponse, 'type'> {
  type: 'io.nats.micro.v1.stats_response';
  /** RFC 3339. */
  started: string;
  endpoints: EndpointStats[];
}

const NAME = /^[A-Za-z0-9_-]+$/;
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const NUID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A 22-character id in the style of a NATS nuid, unique per replica. */
function instanceId(): string {
  return [...randomBytes(22)].map((b) => NUID_ALPHABET[b % NUID_ALPHABET.length]).join('');
}

class EndpointCounter {
  numRequests = 0;
  numErrors = 0;
  lastError = '';
  processingNs = 0n;

  constructor(readonly config: ServiceEndpointConfig) {}

  stats(): EndpointStats {
    const total = Number(this.processingNs);
    return {
      name: this.config.name,
      subject: this.config.subject,
      queue_group: this.config.queueGroup,
      num_requests: this.numRequests,
      num_errors: this.numErrors,
      last_error: this.lastError,
      processing_time: total,
      average_processing_time: this.numRequests === 0 ? 0 : Math.round(total / this.numRequests),
    };
  }
}

export class ServiceApi {
  readonly id = instanceId();
  private readonly started = new Date().toISOString();
  private readonly counters: ReadonlyMap<string, EndpointCounter>;
  private subscriptions: WireSubscription[] = [];

  constructor(readonly config: ServiceApiConfig) {
    if (!NAME.test(config.name)) throw new Error(`service name ${JSON.stringify(config.name)} must be letters, digits, "_" or "-"`);
    if (!SEMVER.test(config.version)) throw new Error(`service version ${JSON.stringify(config.version)} must be a semantic version, e.g. 1.0.0`);
    for (const e of config.endpoints) if (!NAME.test(e.name)) throw new Error(`endpoint name ${JSON.stringify(e.name)} must be letters, digits, "_" or "-"`);
    this.counters = new Map(config.endpoints.map((e) => [e.subject, new EndpointCounter(e)]));
  }

  /**
   * Counts one request on `subject` that took `elapsedNs`; `error` is set when its reply was an
   * error. Requests the service refused (bad signature, invalid payload) count as errors too: an
   * operator watching `num_errors` wants to see them.
   */
  record(subject: string, elapsedNs: bigint, error?: string): void {
    const counter = this.counters.get(subject);
    if (!counter) return;
    counter.numRequests++;
    counter.processingNs += elapsedNs;
    if (error !== undefined) {
      counter.numErrors++;
      counter.lastError = error;
    }
  }

  ping(): PingResponse {
    const { name, version } = this.config;
    return { type: 'io.nats.micro.v1.ping_response', name, id: this.id, version, metadata: { ...this.config.metadata } };
  }

  info(): InfoResponse {
    const { name, version, description } = this.config;
    return {
      type: 'io.nats.micro.v1.info_response',
      name,
      id: this.id,
      version,
      metadata: { ...this.config.metadata },
      description,
      endpoints: this.config.endpoints.map((e) => ({ name: e.name, subject: e.subject, queue_group: e.queueGroup, metadata: e.metadata ?? null })),
    };
  }

  stats(): StatsResponse {
    const { name, version } = this.config;
    return {
      type: 'io.nats.micro.v1.stats_response',
      name,
      id: this.id,
      version,
      metadata: { ...this.config.metadata },
      started: this.started,
      endpoints: [...this.counters.values()].map((c) => c.stats()),
    };
  }

  /** Subscribes the nine discovery subjects on `wire`. */
  start(wire: WireConnection): void {
    const answers: Record<'PING' | 'INFO' | 'STATS', () => unknown> = { PING: () => this.ping(), INFO: () => this.info(), STATS: () => this.stats() };
    for (const [verb, answer] of Object.entries(answers)) {
      for (const subject of [`$SRV.${verb}`, `$SRV.${verb}.${this.config.name}`, `$SRV.${verb}.${this.config.name}.${this.id}`]) {
        this.subscriptions.push(wire.subscribe(subject, { callback: (msg) => msg.respond(encodeJson(answer())) }));
      }
    }
  }

  stop(): void {
    for (const sub of this.subscriptions) sub.unsubscribe();
    this.subscriptions = [];
  }
}
