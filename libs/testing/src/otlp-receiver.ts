// An OTLP/HTTP receiver (JSON encoding) for the tests: processes started with
// OTEL_EXPORTER_OTLP_ENDPOINT=<receiver.url> and OTEL_EXPORTER_OTLP_PROTOCOL=http/json export
// their spans to it with the SDK's own OTLP exporter, as they would to a collector.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A finished span, from whichever process it came. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  /** Undefined for a trace's root. */
  parentSpanId: string | undefined;
  name: string;
  /** 1 internal, 2 server, 3 client, 4 producer, 5 consumer (OTLP's SpanKind). */
  kind: number;
  /** The `service.name` of the process that made it. */
  service: string;
  attributes: Record<string, unknown>;
  startNs: bigint;
  endNs: bigint;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  url: string;
  /** Every span received so far. */
  spans(): CollectedSpan[];
  close(): Promise<void>;
}

interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: OtlpAnyValue[] };
}

function valueOf(value: OtlpAnyValue | undefined): unknown {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: { key: string; value?: OtlpAnyValue }[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));
}

/** OTLP/JSON writes ids in hex; accept base64 too (what a protobuf-JSON mapping would give). */
function hexId(id: string | undefined, length: number): string | undefined {
  if (!id) return undefined;
  if (id.length === length && /^[0-9a-f]+$/i.test(id)) return id.toLowerCase();
  const hex = Buffer.from(id, 'base64').toString('hex');
  return /^0+$/.test(hex) ? undefined : hex;
}

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value?: OtlpAnyValue }[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind?: number; attributes?: { key: string; value?: OtlpAnyValue }[]; startTimeUnixNano: string | number; endTimeUnixNano: string | number }[] }[];
  }[];
}

/** Starts a receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: CollectedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !(req.headers['content-type'] ?? '').includes('json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? 'unknown');
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            received.push({
              traceId: hexId(s.traceId, 32)!,
              spanId: hexId(s.spanId, 16)!,
              parentSpanId: hexId(s.parentSpanId, 16),
              name: s.name,
              kind: s.kind ?? 1,
              service,
              attributes: attributesOf(s.attributes),
              startNs: BigInt(s.startTimeUnixNano),
              endNs: BigInt(s.endTimeUnixNano),
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const KINDS = ['', '', 'server', 'client', 'producer', 'consumer'];

/**
 * A trace as an indented tree, children in start order: `name [service] duration` and the given
 * attributes of each span. Spans whose parent is not among `spans` are printed as roots.
 */
export function renderTrace(spans: readonly CollectedSpan[], attributes: readonly string[] = []): string {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string | undefined, CollectedSpan[]>();
  for (const s of spans) {
    const parent = s.parentSpanId !== undefined && ids.has(s.parentSpanId) ? s.parentSpanId : undefined;
    children.set(parent, [...(children.get(parent) ?? []), s]);
  }
  for (const list of children.values()) list.sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0));
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const s of children.get(parent) ?? []) {
      const ms = Number(s.endNs - s.startNs) / 1e6;
      const shown = attributes.filter((a) => s.attributes[a] !== undefined).map((a) => `${a}=${JSON.stringify(s.attributes[a])}`);
      const kind = KINDS[s.kind] ? ` (${KINDS[s.kind]})` : '';
      lines.push(`${'  '.repeat(depth)}${s.name}${kind} [${s.service}] ${ms.toFixed(1)} ms${shown.length > 0 ? `  ${shown.join(' ')}` : ''}`);
      walk(s.spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}
