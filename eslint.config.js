// Lint rules: typescript-eslint's recommended set plus the layering rules from ../shared/design.md.
import tseslint from 'typescript-eslint';

const forbid = (patterns, message) => ['error', { patterns: patterns.map((group) => ({ group: [group], message })) }];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    files: ['protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        ['node:net', 'node:fs', 'node:fs/*', 'net', 'fs', '../broker/*', '../tiering/*', '../iceberg/*', '../../broker/*', '../../tiering/*', '../../iceberg/*'],
        'protocol/ is pure: no sockets, no files, no upper layers.',
      ),
    },
  },
  {
    files: ['iceberg/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        ['../broker/*', '../tiering/*', '../protocol/*', '../../broker/*', '../../tiering/*', '../../protocol/*'],
        'iceberg/ knows nothing about Kafka.',
      ),
    },
  },
  {
    files: ['tiering/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(['../broker/*', '../../broker/*'], 'tiering/ must not reach into broker internals.'),
    },
  },
  {
    files: ['broker/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        ['../iceberg/*', '../../iceberg/*', '../../../iceberg/*'],
        'broker/ meets Iceberg only through tiering/: hand tiering/ the configuration (tiering/plugin/open-iceberg-tiering.ts).',
      ),
    },
  },
  {
    files: ['broker/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': forbid(
        ['../../iceberg/*', '../../tiering/*', '../../protocol/*', '../admin/*', '../tiering/*', '../log/*', '../topics/*'],
        'the floe CLI talks to a broker only over HTTP (broker/cli/admin-client.ts); it starts one through ../main.js.',
      ),
    },
  },
);
