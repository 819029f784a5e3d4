// METRICS_PORT and METRICS_HOST as every process reads them: its own default, an override, 0 for
// any free port, a bad value refused naming the setting; distinct defaults for the processes that
// run side by side on one host.
import { ConfigError, DEFAULT_METRICS_PORTS, metricsEnvHelp, readRuntimeConfig } from '../src/index.js';

describe('the metrics settings of a process', () => {
  const read = (env: NodeJS.ProcessEnv, metricsPort?: number) => readRuntimeConfig({ EVENT_STORE: 'embedded', ...env }, { natsByDefault: true, ...(metricsPort === undefined ? {} : { metricsPort }) });

  it("defaults to the process's own port on every address; METRICS_PORT and METRICS_HOST override it; 0 is any free port", () => {
    expect(read({}, DEFAULT_METRICS_PORTS.tribunal).metrics).toEqual({ port: 9467, host: '0.0.0.0' });
    expect(read({ METRICS_PORT: '9999', METRICS_HOST: '127.0.0.1' }, DEFAULT_METRICS_PORTS.tribunal).metrics).toEqual({ port: 9999, host: '127.0.0.1' });
    expect(read({ METRICS_PORT: '0' }, DEFAULT_METRICS_PORTS.voting).metrics).toEqual({ port: 0, host: '0.0.0.0' });
    // a process that names no default (a test's own context) serves nothing
    expect(read({ METRICS_PORT: '9999' }).metrics).toBeUndefined();
  });

  it('refuses a port that is not one, naming METRICS_PORT', () => {
    for (const bad of ['http', '-1', '65536', '94.64']) {
      expect(() => read({ METRICS_PORT: bad }, 9465)).toThrow(ConfigError);
      expect(() => read({ METRICS_PORT: bad }, 9465)).toThrow(/^METRICS_PORT=/);
    }
  });

  it('gives the processes of a distributed deployment distinct defaults, and says each in --help', () => {
    const separate = Object.entries(DEFAULT_METRICS_PORTS).filter(([name]) => name !== 'standalone');
    expect(new Set(separate.map(([, port]) => port)).size).toBe(separate.length);
    // the one-process mode serves everything where the projections always did
    expect(DEFAULT_METRICS_PORTS.standalone).toBe(DEFAULT_METRICS_PORTS.projections);
    expect(metricsEnvHelp(9468)).toMatch(/^METRICS_PORT\s+.*\(default 9468; 0 = any free port\)$/m);
    expect(metricsEnvHelp(9468)).toMatch(/^METRICS_HOST\s+/m);
  });
});
