/**
 * The event log, live: every committed event, filterable by stream category, type and actor, each
 * marked by the check of its command signature done here in the browser (WebCrypto Ed25519 over
 * the envelope rebuilt from the event's metadata, under the key the registry's events gave its
 * actor at that point of the log).
 */
import { useMemo, useState } from 'preact/hooks';
import { useEventLog, type LoggedEvent } from '../lib/event-log';
import { setSearch } from '../lib/router';
import type { SignatureMark } from '../lib/signing';
import type { ConsolePage, PageProps } from '../page';
import { AgentName, Badge, Empty, Time } from '../ui';

const SHOWN = 300;

export function SignatureBadge(props: { mark: SignatureMark | undefined }) {
  const m = props.mark;
  if (!m) return <Badge tone="muted">checking</Badge>;
  switch (m.state) {
    case 'verified':
      return (
        <Badge tone="good" title={`The command signature verifies under ${m.actor}'s key (checked in this browser)`}>
          ✓ verified
        </Badge>
      );
    case 'unsigned':
      return (
        <Badge tone="muted" title={m.actor ? `${m.actor} recorded no signature` : 'No command metadata'}>
          unsigned
        </Badge>
      );
    case 'failed':
      return (
        <Badge tone="bad" title={m.why}>
          ✗ failed
        </Badge>
      );
    case 'unknown_key':
      return (
        <Badge tone="warn" title={`${m.actor}'s key is neither in the log nor a configured operator's: it cannot be checked`}>
          key unknown
        </Badge>
      );
  }
}

function options(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

/** Fields a person looks for first, in this order. */
const TELLING = ['title', 'decision', 'verdict', 'reason', 'reasoning', 'rootCause', 'summary', 'actionType', 'riskLevel', 'risk', 'health', 'trustScore', 'status', 'constitution', 'tier', 'outcome'];

/** Up to three telling scalar fields of an event's data, as one line. */
function gist(data: Record<string, unknown>): string {
  const text = (v: unknown) => (typeof v === 'string' ? (v.length > 80 ? `${v.slice(0, 79)}…` : v) : String(v));
  return TELLING.filter((k) => ['string', 'number', 'boolean'].includes(typeof data[k]))
    .slice(0, 3)
    .map((k) => `${k}: ${text(data[k])}`)
    .join(' · ');
}

function Row(props: { entry: LoggedEvent }) {
  const { event, mark } = props.entry;
  const actor = typeof event.metadata?.['actor'] === 'string' ? (event.metadata['actor'] as string) : undefined;
  return (
    <tr data-event-type={event.type} data-signature={mark?.state ?? 'checking'} data-command-id={String(event.metadata?.['commandId'] ?? '')}>
      <td data-label="When">
        <Time at={event.recordedAt} />
      </td>
      <th scope="row" data-label="Event">
        <span class="strong">{event.type}</span>
        <div class="small muted mono" title="The stream and the event's revision in it, then its position in the whole log">
          {event.streamId}@{event.revision} · position {event.position}
        </div>
        {gist(event.data) ? <div class="small">{gist(event.data)}</div> : null}
      </th>
      <td data-label="Actor">{actor ? <AgentName id={actor} /> : <span class="muted">–</span>}</td>
      <td data-label="Signature">
        <SignatureBadge mark={mark} />
      </td>
      <td data-label="Details" class="wide">
        <details>
          <summary>data</summary>
          <pre>{JSON.stringify(event.data, null, 2)}</pre>
          <pre class="small">{JSON.stringify(event.metadata, null, 2)}</pre>
        </details>
      </td>
    </tr>
  );
}

function Events(props: PageProps) {
  const log = useEventLog();
  const category = props.search.get('category') ?? '';
  const type = props.search.get('type') ?? '';
  const actor = props.search.get('actor') ?? '';
  const [paused, setPaused] = useState(false);
  const [frozen, setFrozen] = useState<LoggedEvent[] | undefined>(undefined);
  const all = paused && frozen ? frozen : log.events;
  const categories = useMemo(() => options(all.map((e) => e.category)), [all.length]);
  const types = useMemo(() => options(all.filter((e) => !category || e.category === category).map((e) => e.event.type)), [all.length, category]);
  const actors = useMemo(() => options(all.map((e) => e.event.metadata?.['actor']).filter((a): a is string => typeof a === 'string')), [all.length]);
  const matching = all.filter((e) => (!category || e.category === category) && (!type || e.event.type === type) && (!actor || e.event.metadata?.['actor'] === actor));
  const shown = matching.slice(-SHOWN).reverse();
  const last = all.at(-1);
  const counts = { verified: 0, unsigned: 0, failed: 0, unknown_key: 0 };
  for (const e of matching) if (e.mark) counts[e.mark.state]++;
  return (
    <>
      <p class="lede">
        {log.received} events received{last ? `, up to log position ${last.event.position}` : ''}{log.status === 'live' ? ', live' : ` (${log.status})`}. Signatures are checked here, in your browser: {counts.verified} verified, {counts.unsigned} unsigned, {counts.failed} failed{counts.unknown_key ? `, ${counts.unknown_key} under a key it does not know` : ''}.
      </p>
      <p class="small muted" data-testid="positions-note">
        A position is where the event store keeps an event in the whole log, not a count of events: the embedded store numbers each commit&apos;s own record too, so positions run ahead of the number of events. <span class="mono">stream@n</span> is the event&apos;s revision in its stream.
      </p>
      <form class="filters" aria-label="Filter events" onSubmit={(e) => e.preventDefault()}>
        <label>
          Stream category
          <select value={category} onChange={(e) => setSearch({ category: (e.target as HTMLSelectElement).value, type: undefined })}>
            <option value="">all</option>
            {categories.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <label>
          Event type
          <select value={type} onChange={(e) => setSearch({ type: (e.target as HTMLSelectElement).value })}>
            <option value="">all</option>
            {types.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Actor
          <select value={actor} onChange={(e) => setSearch({ actor: (e.target as HTMLSelectElement).value })}>
            <option value="">all</option>
            {actors.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          aria-pressed={paused}
          onClick={() => {
            setFrozen(paused ? undefined : [...log.events]);
            setPaused(!paused);
          }}
        >
          {paused ? 'Resume live updates' : 'Pause live updates'}
        </button>
        {category || type || actor ? (
          <button type="button" onClick={() => setSearch({ category: undefined, type: undefined, actor: undefined })}>
            Clear filters
          </button>
        ) : null}
      </form>
      <p class="small muted" role="status" aria-live="polite">
        {matching.length} matching{matching.length > SHOWN ? `, the newest ${SHOWN} shown` : ''}
      </p>
      {shown.length === 0 ? (
        <Empty>{log.received === 0 ? 'Waiting for events…' : 'No event matches these filters.'}</Empty>
      ) : (
        <div class="table-wrap card">
          <table class="responsive events">
            <caption class="sr-only">Events, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">Actor</th>
                <th scope="col">Signature</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((e) => (
                <Row key={e.seq} entry={e} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

export const eventsPage: ConsolePage = { path: 'events', label: 'Event log', title: 'Event log', component: Events };
