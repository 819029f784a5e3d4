import { currentTraceparent, inSpan, traceHeaders, tracingExporterOf, TracingConfigError, tracingOn } from '../src/index.js';

describe('tracing from the OTEL_* variables', () => {
  it('is off without them, with OTEL_TRACES_EXPORTER=none, and with OTEL_SDK_DISABLED=true', () => {
    expect(tracingExporterOf({})).toBeUndefined();
    expect(tracingExporterOf({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBeUndefined();
    expect(tracingExporterOf({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBeUndefined();
  });

  it('is on with an OTLP endpoint or an exporter; http/protobuf unless told otherwise', () => {
    expect(tracingExporterOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual({ exporter: 'otlp', protocol: 'http/protobuf' });
    expect(tracingExporterOf({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toEqual({ exporter: 'otlp', protocol: 'http/json' });
    expect(tracingExporterOf({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toEqual({ exporter: 'otlp', protocol: 'http/protobuf' });
    expect(tracingExporterOf({ OTEL_TRACES_EXPORTER: 'console' })).toMatchObject({ exporter: 'console' });
  });

  it('refuses what it cannot honour, saying what it can', () => {
    expect(() => tracingExporterOf({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(TracingConfigError);
    expect(() => tracingExporterOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/http\/protobuf or http\/json/);
  });

  it('while off, spans cost nothing: the work runs without a span, and no header or traceparent is made', async () => {
    expect(tracingOn()).toBe(false);
    expect(await inSpan('x', {}, async (span) => span)).toBeUndefined();
    expect(traceHeaders()).toEqual({});
    expect(currentTraceparent()).toBeUndefined();
  });
});
