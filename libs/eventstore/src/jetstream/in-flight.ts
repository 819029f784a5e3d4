// What JetStream answers while another write is in flight, and how an append waits for it
// (nats-server 2.11+: docs/cluster.md, "Why 2.11.0").
import { sleep } from '../catch-up.js';
import { StoreUnavailable } from '../errors.js';

/**
 * JetStream's answers to a publish whose expected last subject sequence is not the actual one:
 * 10071 names the actual sequence; 10164 (nats-server 2.11+, nats-io/nats-server#6194) is given at
 * once, before any check of the store, when another conditional publish to the subject is still in
 * flight on the stream leader, whose winner a read may not show yet.
 */
export const WRONG_LAST_SEQUENCE = new Set<number>([10071, 10164]);
/**
 * JetStream's answers that a publish cannot be decided yet (nats-server 2.11+): 10158, a publish
 * with the same message id (a copy of this commit) is in flight; 10163, the leader cannot check
 * the expected sequence yet (it has just been elected). Either is answered by trying again shortly.
 */
export const NOT_YET = new Set<number>([10158, 10163]);
/**
 * Waiting for a write in flight on the stream leader (our copy, or a winner a read does not show
 * yet): a back-off from 1 ms, doubling, at most 32 ms a step, for at most the request timeout in all.
 */
const IN_FLIGHT_FIRST_WAIT_MS = 1;
const IN_FLIGHT_MAX_WAIT_MS = 32;
/**
 * The bounded back-off of one append waiting for a write in flight on the stream leader: doubling
 * steps with jitter (so that racing writers do not ask again in lockstep), for at most `budgetMs`
 * in all; then StoreUnavailable, naming what was waited for.
 */
export class InFlightWait {
  private step = IN_FLIGHT_FIRST_WAIT_MS;
  private waited = 0;

  constructor(
    private readonly streamId: string,
    private readonly budgetMs: number,
  ) {}

  async wait(reason: string): Promise<void> {
    if (this.waited >= this.budgetMs) {
      throw new StoreUnavailable(`jetstream: append to ${this.streamId}: still refused after waiting ${Math.round(this.waited)} ms: ${reason}`, this.streamId);
    }
    const ms = Math.min(this.step * (0.5 + Math.random()), this.budgetMs - this.waited);
    this.step = Math.min(this.step * 2, IN_FLIGHT_MAX_WAIT_MS);
    this.waited += ms;
    await sleep(ms);
  }
}

