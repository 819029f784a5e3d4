/** Small shared pieces of the pages. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

export function Section(props: { title: string; id?: string; actions?: ComponentChildren; children: ComponentChildren }) {
  const id = props.id ?? `s-${props.title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <section class="card" aria-labelledby={id}>
      <div class="card-head">
        <h2 id={id}>{props.title}</h2>
        {props.actions}
      </div>
      {props.children}
    </section>
  );
}

export type Tone = 'good' | 'warn' | 'bad' | 'info' | 'muted';

export function Badge(props: { tone?: Tone; title?: string; children: ComponentChildren }) {
  return (
    <span class={`badge badge-${props.tone ?? 'muted'}`} title={props.title}>
      {props.children}
    </span>
  );
}

export function Loading(props: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {props.what}…
    </p>
  );
}

/** A message that something the person did failed, read out by screen readers as it appears; nothing without one. */
export function Alert(props: { message: string | undefined }) {
  return props.message ? (
    <p class="error" role="alert">
      {props.message}
    </p>
  ) : null;
}

export function ErrorNote(props: { error: Error | undefined; what: string }) {
  if (!props.error) return null;
  const code = (props.error as { code?: string }).code;
  return (
    <p class="error" role="alert">
      Could not load {props.what}: {code ? <code>{code}</code> : null} {props.error.message}
    </p>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

/** A 0..1 value as a bar with its number; `invert`: high is bad (risk). */
/** A value on a bar coloured by how good it is; `stale` (a figure no longer current, with why as its title) is grey. */
export function Meter(props: { value: number; label: string; invert?: boolean; max?: number; stale?: string }) {
  const max = props.max ?? 1;
  const share = Math.max(0, Math.min(1, props.value / max));
  const goodness = props.invert ? 1 - share : share;
  const tone = props.stale ? 'stale' : goodness >= 0.66 ? 'good' : goodness >= 0.4 ? 'warn' : 'bad';
  const text = max === 1 ? props.value.toFixed(2) : String(props.value);
  return (
    <span class="meter" role="meter" aria-label={props.label} aria-valuemin={0} aria-valuemax={max} aria-valuenow={props.value} aria-valuetext={props.stale ? `${text} (${props.stale})` : text} title={props.stale} data-stale={props.stale ? 'true' : undefined}>
      <span class="meter-track">
        <span class={`meter-fill tone-${tone}`} style={{ width: `${(share * 100).toFixed(1)}%` }} />
      </span>
      <span class="meter-text">{text}</span>
    </span>
  );
}

/** A rate 0..1 as a percentage; null as a dash. */
export function percent(value: number | null | undefined, digits = 0): string {
  return value === null || value === undefined ? '–' : `${(value * 100).toFixed(digits)} %`;
}

function relative(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  const text = s < 60 ? `${s}s` : s < 3600 ? `${Math.round(s / 60)} min` : s < 86400 ? `${Math.round(s / 3600)} h` : `${Math.round(s / 86400)} d`;
  return ms >= 0 ? `${text} ago` : `in ${text}`;
}

/** A timestamp: relative in the text, exact in the tooltip and the datetime attribute; kept fresh. */
export function Time(props: { at: string | null | undefined }) {
  const [, tick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => tick((t) => t + 1), 15_000);
    return () => clearInterval(timer);
  }, []);
  if (!props.at) return <span class="muted">–</span>;
  const when = new Date(props.at);
  return (
    <time dateTime={props.at} title={when.toLocaleString()}>
      {relative(Date.now() - when.getTime())}
    </time>
  );
}

export function AgentName(props: { id: string | null | undefined }) {
  if (!props.id) return <span class="muted">–</span>;
  return props.id.startsWith('service:') ? <span class="agent service">{props.id}</span> : <a class="agent" href={`/fleet?agent=${encodeURIComponent(props.id)}`}>{props.id}</a>;
}

/** Label/value pairs. */
export function Facts(props: { items: Array<[string, ComponentChildren] | false | null | undefined | ''> }) {
  return (
    <dl class="facts">
      {props.items
        .filter((i): i is [string, ComponentChildren] => Boolean(i))
        .map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
    </dl>
  );
}

/** Status words to a tone: what a person should notice. */
export function toneOf(status: string): Tone {
  if (/^(approved|resolved|active|closed|verified|approve|decided|sound|agreed|answered|resume|unanimous_approve|majority_approve)$/.test(status)) return 'good';
  if (/^(overridden|superseded|cancelled)$/.test(status)) return 'warn';
  if (/^(escalated|awaiting_operator|expired|paused|open|object|deny|reject|rejected|failed|disabled|unsound|blocked|stayed_paused|escalate)$/.test(status)) return 'bad';
  if (/^(review|voting|pending|synthesis|awaiting_|tie_break|quorum|send_back)/.test(status)) return 'warn';
  return 'muted';
}

export function Status(props: { value: string; label?: string }) {
  return <Badge tone={toneOf(props.value)}>{props.label ?? props.value.replace(/_/g, ' ')}</Badge>;
}

/** `3 open objections`, `1 open objection`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * On a narrow screen (the list above the detail), brings the detail into view when the selection
 * changes by a click, not on the first render.
 */
export function useScrollIntoViewOnChange(key: string | undefined): (el: HTMLElement | null) => void {
  const last = useRef<string | undefined>(key);
  const el = useRef<HTMLElement | null>(null);
  useEffect(() => {
    if (key !== last.current && el.current && window.matchMedia('(max-width: 1000px)').matches) el.current.scrollIntoView({ block: 'start' });
    last.current = key;
  }, [key]);
  return (node) => {
    el.current = node;
  };
}

/** A figure with its label (and an optional note below). */
export function Tile(props: { label: string; value: string | number; wide?: boolean; children?: ComponentChildren }) {
  return (
    <div class={props.wide ? 'tile wide' : 'tile'}>
      <div class="value">{props.value}</div>
      <div class="label">{props.label}</div>
      {props.children}
    </div>
  );
}

/** Below a paged list: how many are shown, and while more follow, a button that shows the next page. */
export function ShowMore(props: { list: { items: readonly unknown[]; more: boolean } | undefined; loading: boolean; onMore: () => void; what: string }) {
  if (!props.list?.more) return null;
  return (
    <p class="show-more">
      <span class="muted small">
        {props.list.items.length} {props.what} shown, more follow
      </span>{' '}
      <button type="button" onClick={props.onMore} disabled={props.loading}>
        {props.loading ? 'Loading…' : `Show more ${props.what}`}
      </button>
    </p>
  );
}
