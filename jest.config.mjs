// Tests: *.unit.spec.ts (pure, fast), *.int.spec.ts (real NATS, real stores), *.e2e.spec.ts (processes).
import { readFileSync } from 'node:fs';

const swc = JSON.parse(readFileSync(new URL('./.swcrc', import.meta.url), 'utf8'));
delete swc.$schema;

const common = {
  rootDir: '.',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swc, swcrc: false }] },
  moduleNameMapper: {
    '^@agora/([a-z0-9-]+)/(browser|client|testing)$': '<rootDir>/libs/$1/src/$2.ts',
    '^@agora/([a-z0-9-]+)$': ['<rootDir>/libs/$1/src/index.ts', '<rootDir>/apps/$1/src/index.ts'],
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testEnvironment: 'node',
};

export default {
  // A test that talks to real servers gets more than Jest's 5 s on a busy machine; a slow one says so itself.
  testTimeout: 30_000,
  // Every suite's duration goes to test-results/timings.jsonl (npm test prints the slowest).
  reporters: ['default', '<rootDir>/tools/jest/timings-reporter.mjs', '<rootDir>/tools/jest/summary-reporter.mjs'],
  // Suites run in a worker process (even one worker: a memory limit turns Jest's in-band run off), and a
  // worker that holds more than this after a suite is replaced by a fresh one. In one process the heap
  // grows with every suite: Jest's ESM mode (--experimental-vm-modules) keeps each suite's module graph
  // (jestjs/jest#14605; a suite of one trivial test keeps ~2.5 MB, ours 10-70 MB).
  workerIdleMemoryLimit: '512MB',
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{libs,apps,tools}/*/{src,test}/**/*.unit.spec.ts'] },
    { ...common, displayName: 'int', testMatch: ['<rootDir>/{libs,apps,tools}/*/{src,test}/**/*.int.spec.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/{libs,apps,tools}/*/{src,test}/**/*.e2e.spec.ts'] },
  ],
};
