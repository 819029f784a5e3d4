import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

/** Packages a domain library (deciders, pure rules) must never import: it stays free of frameworks, transports and stores. */
const infrastructure = ['@nestjs/*', '@nats-io/*', '@kurrent/*', 'prom-client', 'express'];

export default tseslint.config(
  { ignores: ['**/dist/**', 'libs/sdk/dist-publish/**', '**/node_modules/**', 'coverage/**', '.nx/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: [],
          banTransitiveDependencies: false,
          depConstraints: [
            // Domain libraries: pure deciders and rules. Only other domain libraries, no infrastructure.
            { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts'], bannedExternalImports: infrastructure },
            // Contracts (zod schemas, subjects) may be imported by anyone and import nothing of ours.
            { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: ['type:contracts'], bannedExternalImports: infrastructure },
            { sourceTag: 'type:infra', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:infra', 'type:testing'] },
            // The client library (@agora/sdk) and what is built on it (the MCP server): no framework, no store.
            { sourceTag: 'type:sdk', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:infra', 'type:sdk', 'type:testing'], bannedExternalImports: ['@nestjs/*', '@kurrent/*', 'express', 'prom-client'] },
            // Test support (used by tests only): it signs and sends as agents do, so it may use contracts, identity and messaging.
            { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:testing', 'type:contracts', 'type:domain', 'type:infra'] },
            // A service: a package with its start function (for standalone mode) and its own main.
            { sourceTag: 'type:service', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:infra', 'type:sdk', 'type:testing'] },
            // A process that composes services (standalone mode).
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:domain', 'type:contracts', 'type:infra', 'type:service', 'type:sdk', 'type:testing'] },
            { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['*'] },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
  },
);
