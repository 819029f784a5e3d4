/**
 * Spans and trace context through the OpenTelemetry API only (docs/decisions/0015-traces-follow-causes.md). Until a
 * process turns tracing on (startTracing, or useTracerProvider in a test) every function here
 * returns at once: no span object, no context switch, no header. The SDK is never loaded then.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type TracerProvider } from '@opentelemetry/api';

export { SpanKind, type Attributes, type Context, type Span };

/** The tracer's name: the instrumentation scope of every Agora span. */
export const TRACER_NAME = 'agora';

let provider: TracerProvider | undefined;

/** Whether spans are recorded in this process. */
export function tracingOn(): boolean {
  return provider !== undefined;
}

/**
 * Makes `tracerProvider` the process's (it must be registered as the global one, with a context
 * manager and the W3C propagator: NodeTracerProvider.register() does all three), or turns tracing
 * off again with undefined.
 */
export function useTracerProvider(tracerProvider: TracerProvider | undefined): void {
  provider = tracerProvider;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent; default the active context. */
  parent?: Context;
}

/**
 * Runs `work` in a span named `name`, active while it runs (so spans started inside are its
 * children and requests sent inside carry it), ended when `work` settles. A thrown error marks
 * the span as failed with its class (`error.type`), never its message (it may quote a payload).
 * With tracing off, `work` runs with undefined and nothing else happens.
 */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span | undefined) => Promise<T>): Promise<T> {
  if (!provider) return work(undefined);
  const tracer = provider.getTracer(TRACER_NAME);
  return tracer.startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, ...(options.attributes ? { attributes: options.attributes } : {}) }, options.parent ?? context.active(), async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failed(span, error instanceof Error ? error.name : typeof error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** `inSpan` for synchronous work (a decider). */
export function inSpanSync<T>(name: string, options: SpanOptions, work: (span: Span | undefined) => T): T {
  if (!provider) return work(undefined);
  const tracer = provider.getTracer(TRACER_NAME);
  return tracer.startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, ...(options.attributes ? { attributes: options.attributes } : {}) }, options.parent ?? context.active(), (span) => {
    try {
      return work(span);
    } catch (error) {
      failed(span, error instanceof Error ? error.name : typeof error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * Starts a span that outlives the call (an SSE subscription, an HTTP request): the caller ends
 * it. Runs `within` in its context. Undefined with tracing off.
 */
export function startSpan<T>(name: string, options: SpanOptions, within: (span: Span | undefined) => T): T {
  if (!provider) return within(undefined);
  const span = provider.getTracer(TRACER_NAME).startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, ...(options.attributes ? { attributes: options.attributes } : {}) }, options.parent ?? context.active());
  return context.with(trace.setSpan(options.parent ?? context.active(), span), () => within(span));
}

/** Runs `work` in `parent` (a context from contextFrom / contextOfEvent): work started later, e.g. a model call launched by a reaction, continues that trace. */
export function inContext<T>(parent: Context, work: () => T): T {
  return provider ? context.with(parent, work) : work();
}

/** Marks a span as failed, with a low-cardinality `error.type` (an error code or class). */
export function failed(span: Span | undefined, errorType: string): void {
  span?.setAttribute('error.type', errorType);
  span?.setStatus({ code: SpanStatusCode.ERROR });
}

/** The W3C trace context (`traceparent`, `tracestate`) of the active span, to send in message headers; empty with tracing off or no span. */
export function traceHeaders(): Record<string, string> {
  if (!provider) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** The active span's `traceparent`, for event metadata; undefined with tracing off or no span. */
export function currentTraceparent(): string | undefined {
  return traceHeaders()['traceparent'];
}

/** The context a message's headers (or an event's `traceparent`) name; the root context when they name none. */
export function contextFrom(carrier: Readonly<Record<string, unknown>> | undefined): Context {
  if (!provider || !carrier) return ROOT_CONTEXT;
  const traceparent = carrier['traceparent'];
  if (typeof traceparent !== 'string') return ROOT_CONTEXT;
  const tracestate = carrier['tracestate'];
  return propagation.extract(ROOT_CONTEXT, typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent });
}

/** The context of an event's `traceparent` metadata (what its command was doing when it appended it). */
export function contextOfEvent(metadata: Readonly<Record<string, unknown>>): Context {
  return contextFrom(typeof metadata['traceparent'] === 'string' ? { traceparent: metadata['traceparent'] } : undefined);
}
