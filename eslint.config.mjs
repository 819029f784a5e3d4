import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

/** Packages a domain library (deciders, pure rules) must never import: it stays free of frameworks, transports and stores. */
const infrastructure = ['@nestjs/*', '@nats-io/*', '@kurrent/*', 'prom-client', 'express'];

/** The protocols whose domain libraries (tag scope:<protocol>) may import only their own and the shared ones (scope:shared). */
const protocols = ['registry', 'tribunal', 'voting', 'dialectic', 'chamber', 'debate'];

/** What a service may import of ours (never another service, nor an app). */
const serviceDeps = ['type:domain', 'type:contracts', 'type:infra', 'type:sdk', 'type:testing'];

/** The module boundaries (Nx project tags, in each package.json), with `cliDeps` as what the CLI may import. */
const boundaries = (cliDeps) => [
  'error',
  {
    allow: [],
    banTransitiveDependencies: false,
    depConstraints: [
      // Domain libraries: pure deciders and rules. Only other domain libraries, no infrastructure.
      { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts'], bannedExternalImports: infrastructure },
      // One protocol's domain never imports another's: what two protocols share lives in a shared one (decider, domain-common, identity, contracts).
      ...protocols.map((p) => ({ sourceTag: `scope:${p}`, onlyDependOnLibsWithTags: [`scope:${p}`, 'scope:shared'] })),
      // Contracts (zod schemas, subjects) may be imported by anyone and import nothing of ours.
      { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: ['type:contracts'], bannedExternalImports: infrastructure },
      { sourceTag: 'type:infra', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:infra', 'type:testing'] },
      // The client library (@agora/sdk) and what is built on it (the MCP server): no framework, no store.
      { sourceTag: 'type:sdk', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:infra', 'type:sdk', 'type:testing'], bannedExternalImports: ['@nestjs/*', '@kurrent/*', 'express', 'prom-client'] },
      // Test support (used by tests only): it signs and sends as agents do, so it may use contracts, identity and messaging.
      { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:testing', 'type:contracts', 'type:domain', 'type:infra'] },
      // A service: a package with its start function (for standalone mode) and its own main. It imports no other service.
      { sourceTag: 'type:service', onlyDependOnLibsWithTags: serviceDeps },
      // The CLI (agora): an app like a service, it imports no service.
      { sourceTag: 'type:cli', onlyDependOnLibsWithTags: cliDeps },
      // The process that composes the services (standalone mode): the one app that imports them.
      { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:infra', 'type:service', 'type:sdk', 'type:testing'] },
      { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['*'] },
    ],
  },
];

/**
 * Files of the CLI that may import services: its tests, which start the services they drive as the
 * standalone process composes them. Its sources import none (the policy parsers the audit reads live
 * in the domain libraries, the runtime and the provider layer).
 */
const cliImportingServices = ['apps/cli/test/**/*.ts'];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/dist-publish/**', '**/node_modules/**', 'coverage/**', '.nx/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': boundaries(serviceDeps),
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: cliImportingServices,
    rules: { '@nx/enforce-module-boundaries': boundaries([...serviceDeps, 'type:service']) },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
  },
);
