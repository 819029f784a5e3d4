import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/**
 * The per-stream hash chain (tamper evidence). Every event of a commit carries, in its metadata
 * under `prevCommitHash`, the hash of the previous commit of its stream; the first commit of a
 * stream carries the stream's genesis value. A commit is the events one command appended at once:
 * consecutive events of a stream with the same `metadata.commandId`.
 *
 *   genesisCommitHash(streamId) = hex(SHA-256("agora.commit-chain.v1\ngenesis\n" + streamId))
 *   commitHash(commit)          = hex(SHA-256("agora.commit-chain.v1\n" +
 *                                   canonicalJson([{id, type, data, metadata} of each event, in order])))
 *
 * with data and metadata as written (an upcast event carries them in `written`).
 *
 * The metadata hashed includes the commit's own `prevCommitHash`, so each link covers every commit
 * before it: an edited, removed or reordered commit breaks the link of the commit after it (the
 * log's tail is covered by the signed checkpoints, not by this chain).
 */
export const COMMIT_CHAIN_FIELD = 'prevCommitHash';
const DOMAIN = 'agora.commit-chain.v1\n';

/** An event as the chain sees it: what the store records of it (revision and position are not hashed). */
export interface ChainEvent {
  id: string;
  type: string;
  data: unknown;
  metadata: Readonly<Record<string, unknown>>;
  /** The data and metadata as stored, when reading changed them (an upcast event): the chain hashes these. */
  written?: { data: unknown; metadata: Readonly<Record<string, unknown>> } | undefined;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The `prevCommitHash` of a stream's first commit. */
export function genesisCommitHash(streamId: string): string {
  return sha256(`${DOMAIN}genesis\n${streamId}`);
}

/**
 * The hash of one commit (its events in order), which the next commit of the stream carries.
 * `known`: values whose canonical JSON is already built (canonicalJson), such as the signed payload
 * the first event's metadata carries.
 */
export function commitHash(commit: readonly ChainEvent[], known?: ReadonlyMap<object, string>): string {
  if (commit.length === 0) throw new RangeError('a commit has at least one event');
  return sha256(DOMAIN + canonicalJson(commit.map((e) => ({ id: e.id, type: e.type, ...(e.written ?? { data: e.data, metadata: e.metadata }) })), known));
}

/** The `prevCommitHash` a new commit carries: the genesis value on an empty stream, else the hash of the stream's last commit. */
export function nextCommitLink(streamId: string, lastCommit: readonly ChainEvent[] | undefined): string {
  return lastCommit === undefined || lastCommit.length === 0 ? genesisCommitHash(streamId) : commitHash(lastCommit);
}

/** A stream's events split into commits: runs of consecutive events with the same `metadata.commandId` (an event without one is a commit of its own). */
export function commitsOf<T extends ChainEvent>(events: readonly T[]): T[][] {
  const commits: T[][] = [];
  let previousId: unknown;
  for (const event of events) {
    const commandId = event.metadata['commandId'];
    const current = commits.at(-1);
    if (current && typeof commandId === 'string' && commandId === previousId) current.push(event);
    else commits.push([event]);
    previousId = commandId;
  }
  return commits;
}

/** The events of the last commit of a stream read in order (or of a run of events ending at a commit boundary). */
export function lastCommitOf<T extends ChainEvent>(events: readonly T[]): T[] {
  return commitsOf(events).at(-1) ?? [];
}

export interface ChainFinding {
  /** Index of the commit in the stream (0: the first). */
  commit: number;
  /** Id of the commit's first event. */
  eventId: string;
  reason: string;
}

/**
 * Checks a whole stream's chain, from its first event: each commit's events all carry the same
 * `prevCommitHash`, equal to the genesis value for the first commit and to `commitHash` of the
 * commit before for the others. Pure; returns one finding per broken link (empty: intact).
 */
export function verifyStreamChain(streamId: string, events: readonly ChainEvent[]): ChainFinding[] {
  const findings: ChainFinding[] = [];
  const commits = commitsOf(events);
  let expected = genesisCommitHash(streamId);
  commits.forEach((commit, index) => {
    const links = new Set(commit.map((e) => e.metadata[COMMIT_CHAIN_FIELD]));
    const link = commit[0]!.metadata[COMMIT_CHAIN_FIELD];
    if (links.size > 1) findings.push({ commit: index, eventId: commit[0]!.id, reason: 'the events of this commit carry different prevCommitHash values' });
    else if (typeof link !== 'string') findings.push({ commit: index, eventId: commit[0]!.id, reason: 'the commit carries no prevCommitHash' });
    else if (link !== expected) {
      findings.push({
        commit: index,
        eventId: commit[0]!.id,
        reason: index === 0 ? 'the first commit of the stream does not carry the genesis value (a commit before it was removed, or it was moved)' : 'prevCommitHash does not match the commit before it (that commit was edited or removed, or this one was)',
      });
    }
    expected = commitHash(commit);
  });
  return findings;
}
