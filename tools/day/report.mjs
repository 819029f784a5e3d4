// The report of a `npm run day` run: report.html, one page that opens offline (inline SVG, no
// script, no font or style from elsewhere) with a plot over time for each figure, the faults shaded
// on every one and the alerts on their own lane; and the figures per window the plots are drawn from.
import { percentile } from './verdicts.mjs';

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const W = 900;
const H = 220;
const PAD = { left: 60, right: 170, top: 24, bottom: 28 };
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const minutes = (ms) => (ms / 60_000).toFixed(ms < 600_000 ? 1 : 0);

/** The decisions' latency per protocol, p50 and p99 of each window of `stepMs` (by when they were decided). */
export function latencySeries(decisions, t0, t1, stepMs) {
  const out = [];
  for (const protocol of [...new Set(decisions.map((d) => d.protocol))].sort()) {
    const p50 = [];
    const p99 = [];
    for (let from = t0; from < t1; from += stepMs) {
      const in_ = decisions.filter((d) => d.protocol === protocol && d.outcome !== 'none' && d.decidedAt >= from && d.decidedAt < from + stepMs).map((d) => (d.decidedAt - d.askedAt) / 1000);
      if (in_.length === 0) continue;
      p50.push([from + stepMs / 2, percentile(in_, 50)]);
      p99.push([from + stepMs / 2, percentile(in_, 99)]);
    }
    out.push({ name: `${protocol} p50`, points: p50 }, { name: `${protocol} p99`, points: p99, dashed: true });
  }
  return out;
}

/** Refusals as the agents saw them (every answer that was not an acknowledgement), per code, per window of `stepMs`. */
export function refusalSeries(refusals, t0, t1, stepMs) {
  return [...new Set(refusals.map((r) => r.code))].sort().map((code) => {
    const points = [];
    for (let from = t0; from < t1; from += stepMs) points.push([from + stepMs / 2, refusals.filter((r) => r.code === code && r.at >= from && r.at < from + stepMs).length]);
    return { name: code, points };
  });
}

/** One plot: lines over time from t0 to t1, the fault windows shaded. */
export function chart({ title, unit, series, faults, t0, t1 }) {
  const all = series.flatMap((s) => s.points.map(([, v]) => v)).filter(Number.isFinite);
  const max = Math.max(1e-9, ...all) * 1.1;
  const x = (t) => PAD.left + ((t - t0) / Math.max(1, t1 - t0)) * (W - PAD.left - PAD.right);
  const y = (v) => H - PAD.bottom - (v / max) * (H - PAD.top - PAD.bottom);
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`, `<rect width="${W}" height="${H}" fill="#fff"/>`, `<text x="${PAD.left}" y="15" font-size="13" font-weight="bold">${esc(title)}${unit ? ` (${esc(unit)})` : ''}</text>`];
  for (const f of faults) parts.push(`<rect x="${x(f.startedAt)}" y="${PAD.top}" width="${Math.max(2, x(f.settledAt) - x(f.startedAt))}" height="${H - PAD.top - PAD.bottom}" fill="#f4c542" fill-opacity="0.3"><title>${esc(f.what)}</title></rect>`);
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    parts.push(`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text x="${PAD.left - 4}" y="${y(v) + 4}" text-anchor="end">${v < 10 ? v.toFixed(1) : Math.round(v)}</text>`);
  }
  const ticks = Math.min(12, Math.max(2, Math.round((t1 - t0) / 300_000)));
  for (let i = 0; i <= ticks; i++) {
    const t = t0 + ((t1 - t0) * i) / ticks;
    parts.push(`<text x="${x(t)}" y="${H - 10}" text-anchor="middle">${minutes(t - t0)} min</text>`);
  }
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = s.points.filter(([, v]) => Number.isFinite(v));
    if (pts.length > 0) parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1.5"${s.dashed ? ' stroke-dasharray="4 3"' : ''} points="${pts.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}"/>`);
    if (i < 14) parts.push(`<line x1="${W - PAD.right + 10}" x2="${W - PAD.right + 28}" y1="${PAD.top + 6 + i * 13}" y2="${PAD.top + 6 + i * 13}" stroke="${color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="4 3"' : ''}/><text x="${W - PAD.right + 32}" y="${PAD.top + 10 + i * 13}">${esc(s.name)}</text>`);
  });
  if (series.length > 14) parts.push(`<text x="${W - PAD.right + 10}" y="${PAD.top + 10 + 14 * 13}">and ${series.length - 14} more</text>`);
  if (all.length === 0) parts.push(`<text x="${(W - PAD.right + PAD.left) / 2}" y="${H / 2}" text-anchor="middle" fill="#888">no data</text>`);
  parts.push('</svg>');
  return parts.join('');
}

/** The alerts' lane: each alert a row, pending in light, firing in dark, the fault windows shaded. */
export function alertLane({ spans, faults, t0, t1 }) {
  const names = [...new Set(spans.map((s) => s.alert))].sort();
  const h = PAD.top + PAD.bottom + Math.max(1, names.length) * 18;
  const x = (t) => PAD.left + ((t - t0) / Math.max(1, t1 - t0)) * (W - PAD.left - PAD.right);
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${h}" viewBox="0 0 ${W} ${h}" font-family="sans-serif" font-size="11">`, `<rect width="${W}" height="${h}" fill="#fff"/>`, `<text x="${PAD.left}" y="15" font-size="13" font-weight="bold">Alerts (pending light, firing dark) and faults (shaded)</text>`];
  for (const f of faults) parts.push(`<rect x="${x(f.startedAt)}" y="${PAD.top}" width="${Math.max(2, x(f.settledAt) - x(f.startedAt))}" height="${h - PAD.top - PAD.bottom}" fill="#f4c542" fill-opacity="0.3"><title>${esc(f.what)}</title></rect>`);
  names.forEach((name, i) => {
    const yy = PAD.top + i * 18;
    parts.push(`<text x="${W - PAD.right + 10}" y="${yy + 12}">${esc(name)}</text>`);
    for (const s of spans.filter((sp) => sp.alert === name)) parts.push(`<rect x="${x(s.from)}" y="${yy + 3}" width="${Math.max(3, x(s.to) - x(s.from))}" height="12" fill="${s.state === 'firing' ? '#b2182b' : '#f4a582'}"><title>${esc(`${name} ${s.state} ${s.labels.process ?? ''}`)}</title></rect>`);
  });
  if (names.length === 0) parts.push(`<text x="${(W - PAD.right + PAD.left) / 2}" y="${PAD.top + 12}" text-anchor="middle" fill="#888">no alert was pending or firing</text>`);
  parts.push('</svg>');
  return parts.join('');
}

/** The plots of the run, by file name (each also on the page). */
export function plots({ series, decisions, refusals, faults, t0, t1 }) {
  const stepMs = Math.max(15_000, Math.round((t1 - t0) / 40 / 15_000) * 15_000);
  const common = { faults, t0, t1 };
  return {
    'decision-latency': chart({ title: 'Decision latency per protocol, p50 (solid) and p99 (dashed)', unit: 's', series: latencySeries(decisions, t0, t1, stepMs), ...common }),
    commands: chart({ title: 'Commands answered per second, all services', unit: '/s', series: series.commands, ...common }),
    refusals: chart({ title: `Refusals by code, as the agents saw them, per ${stepMs / 1000} s`, unit: 'count', series: refusalSeries(refusals, t0, t1, stepMs), ...common }),
    'refusals-services': chart({ title: 'Refusals by code, as the services answered them', unit: '/s', series: series.refused, ...common }),
    rss: chart({ title: 'RSS per process', unit: 'MiB', series: series.rss, ...common }),
    'event-loop': chart({ title: 'Event-loop delay p99 per process', unit: 'ms', series: series.loop, ...common }),
    'audit-lag': chart({ title: 'Audit lag (oldest event not verified yet)', unit: 's', series: series.auditLag, ...common }),
    alerts: alertLane({ spans: series.alerts, ...common }),
  };
}

/** report.html: the verdict, the figures, the faults, every plot. */
export function reportHtml({ summary, svgs }) {
  const row = (cells, tag = 'td') => `<tr>${cells.map((c) => `<${tag}>${esc(c)}</${tag}>`).join('')}</tr>`;
  const checks = summary.checks.map((c) => `<tr class="${c.ok ? (c.skipped ? 'skip' : 'ok') : 'fail'}"><td>${c.ok ? (c.skipped ? 'not judged' : 'passed') : 'FAILED'}</td><td>${esc(c.name)}</td><td>${esc(c.detail)}</td></tr>`).join('');
  const faults = summary.faults.map((f) => row([`${minutes(f.startedAt - summary.startedAt)} min`, f.what, `${((f.endedAt - f.startedAt) / 1000).toFixed(1)} s`, `${((f.settledAt - f.endedAt) / 1000).toFixed(1)} s`])).join('');
  const protocols = Object.entries(summary.decisions.byProtocol).map(([p, d]) => row([p, String(d.count), String(d.undecided), `${d.p50} s`, `${d.p99} s`])).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Agora: a day in the life, ${esc(summary.minutes)} minutes, ${esc(summary.agents)} agents</title>
<style>body{font-family:sans-serif;max-width:960px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}tr.fail td{background:#fdd}tr.ok td:first-child{color:#070}tr.skip td:first-child{color:#888}svg{display:block;margin:1em 0}</style></head>
<body>
<h1>A day in the life: ${esc(summary.verdict)}</h1>
<p>${esc(summary.minutes)} minutes from ${esc(new Date(summary.startedAt).toISOString())}; ${esc(summary.agents)} model-backed agents (${esc(summary.fleet.loops)} role loops; half over NATS, half through the gateway); ${esc(summary.cluster)}; ${esc(summary.faults.length)} faults. Commands the agents and the operator sent: ${esc(summary.commands.sent)}, acknowledged ${esc(summary.commands.acknowledged)}; decisions ${esc(summary.decisions.count)}; model calls ${esc(summary.fleet.modelCalls)}.</p>
<h2>Assertions</h2><table>${row(['', 'assertion', 'figures'], 'th')}${checks}</table>
<h2>Decisions</h2><table>${row(['protocol', 'decided', 'not decided in time', 'latency p50', 'latency p99'], 'th')}${protocols}</table>
<h2>Faults</h2><table>${row(['at', 'fault', 'lasted', 'settled after'], 'th')}${faults}</table>
<h2>Over time</h2>
${Object.values(svgs).join('\n')}
<p>Logs of every process: <code>logs/</code> beside this page; the figures: <code>summary.json</code>.</p>
</body></html>
`;
}
