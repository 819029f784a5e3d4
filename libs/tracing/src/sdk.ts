/**
 * The OpenTelemetry SDK, started from the standard OTEL_* variables, off by default. The SDK's
 * modules are imported only when tracing is on: a process without OTEL_* settings never loads them.
 */
import { useTracerProvider } from './spans.js';

/** The variables read here (the exporter and the batch processor read their own OTEL_EXPORTER_OTLP_* and OTEL_BSP_* too). */
export const TRACING_ENV_HELP = `OTEL_TRACES_EXPORTER       otlp (the default once an OTLP endpoint is set), console (spans on stdout) or none.
                           Tracing is off unless this or an OTLP endpoint is set; OTEL_SDK_DISABLED=true turns it off.
OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
                           the collector (e.g. http://127.0.0.1:4318; /v1/traces is added to the first).
OTEL_EXPORTER_OTLP_PROTOCOL / OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
                           http/protobuf (default) or http/json; grpc is not supported.
OTEL_SERVICE_NAME          default the process's name (agora-tribunal, ...); OTEL_RESOURCE_ATTRIBUTES adds to it.
OTEL_TRACES_SAMPLER(_ARG)  default parentbased_always_on. OTEL_BSP_SCHEDULE_DELAY etc. tune the batching.`;

export class TracingConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TracingConfigError';
  }
}

export interface Tracing {
  /** What was started, for the start-up log. */
  line: string;
  /** Exports the spans still buffered and stops. */
  shutdown(): Promise<void>;
}

type Exporter = 'otlp' | 'console';

/** Which exporter the environment asks for; undefined when tracing stays off. Throws TracingConfigError for a value it cannot honour. */
export function tracingExporterOf(env: NodeJS.ProcessEnv): { exporter: Exporter; protocol: 'http/protobuf' | 'http/json' } | undefined {
  if ((env['OTEL_SDK_DISABLED'] ?? '').trim().toLowerCase() === 'true') return undefined;
  const named = (env['OTEL_TRACES_EXPORTER'] ?? '').trim().toLowerCase();
  const endpoint = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] || env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  if (named === 'none' || (named === '' && !endpoint)) return undefined;
  const exporter = named === '' ? 'otlp' : named;
  if (exporter !== 'otlp' && exporter !== 'console') throw new TracingConfigError(`OTEL_TRACES_EXPORTER=${named}: Agora exports traces with otlp or console (or none)`);
  const protocol = (env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] || env['OTEL_EXPORTER_OTLP_PROTOCOL'] || 'http/protobuf').trim();
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') throw new TracingConfigError(`OTLP protocol ${protocol}: Agora exports over http/protobuf or http/json (a collector's port 4318), not ${protocol}`);
  return { exporter, protocol };
}

/**
 * Starts tracing for this process when the environment asks for it (tracingExporterOf): a
 * NodeTracerProvider registered globally (async-hooks context, W3C trace context propagator), the
 * sampler of OTEL_TRACES_SAMPLER, a batch span processor and the OTLP (or console) exporter, with
 * `service.name` = OTEL_SERVICE_NAME or `serviceName`. Undefined when tracing stays off.
 */
export async function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): Promise<Tracing | undefined> {
  const chosen = tracingExporterOf(env);
  if (!chosen) return undefined;
  const [{ NodeTracerProvider, BatchSpanProcessor, ConsoleSpanExporter }, { defaultResource, detectResources, envDetector, resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/resources'),
  ]);
  let exporter;
  if (chosen.exporter === 'console') exporter = new ConsoleSpanExporter();
  else if (chosen.protocol === 'http/json') exporter = new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  else exporter = new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
  // Later ones win: the SDK's defaults, the process's name, then OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': serviceName }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
  useTracerProvider(provider);
  const name = String(resource.attributes['service.name']);
  return {
    line: `tracing: ${chosen.exporter === 'console' ? 'spans on stdout' : `OTLP ${chosen.protocol}`} as service ${name}`,
    async shutdown() {
      useTracerProvider(undefined);
      await provider.shutdown();
    },
  };
}
