import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/** What src/domain and src/platform may not import: sockets, processes, transports, surfaces, adapters. */
const coreRestrictedPaths = [
  ...['node:net', 'net'].map((name) => ({
    name,
    importNames: ['connect', 'createConnection', 'createServer', 'Socket', 'Server'],
    message: 'Domain code opens no sockets: declare a port and put the adapter in src/adapters.',
  })),
  ...['node:dgram', 'dgram', 'node:tls', 'tls', 'node:http', 'http', 'node:https', 'https'].map((name) => ({
    name,
    message: 'Domain code opens no sockets: declare a port and put the adapter in src/adapters.',
  })),
  ...['node:child_process', 'child_process'].map((name) => ({
    name,
    message: 'Domain code starts no processes: run them through the ProcessRunner port (src/platform/processes.ts), which src/adapters/process implements.',
  })),
];
const coreRestrictedPatterns = [
  { group: ['fastify', 'fastify-*', '@fastify/*', 'socket.io', 'socket.io-*', 'ws'], message: 'Domain code must not import a transport; put the adapter in src/surfaces.' },
  { group: ['**/surfaces/**'], message: 'Domain code must not depend on a surface.' },
  { group: ['**/adapters/**', '**/storage/**'], message: 'Domain code depends on the ports it declares; src/hub.ts wires the adapters.' },
];

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'coverage/', 'dist/', 'drivers/examples/**/*.lua'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': 'off',
    },
  },
  {
    // An import cycle makes module start order depend on who imported first, and hides a missing
    // port. The rule follows value imports only (`import type` is erased at run time, and import-x
    // skips it by design); the TypeScript resolver maps the `.js` specifiers to the `.ts` sources.
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    // A failure is raised from its module's catalogue (`defineErrors`), so a code has one kind
    // and one message everywhere; only the catalogue builds a DomainError. Tests may, to play a
    // driver or port that fails.
    files: ['**/*.ts'],
    ignores: ['src/platform/errors.ts', 'test/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='DomainError']",
          message: "Raise a catalogued failure (e.g. deviceErrors.DEVICE_NOT_FOUND({ id })); add the code to the module's errors.ts.",
        },
      ],
    },
  },
  {
    // The domain core never depends on a transport: surfaces adapt it, not the other way round.
    // Nor does it open sockets or reach its adapters: it declares a port (IrTransmitter, the
    // repositories) and src/hub.ts wires the adapter (src/adapters, src/storage) to it.
    files: ['src/domain/**/*.ts', 'src/platform/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: coreRestrictedPaths, patterns: coreRestrictedPatterns }] },
  },
  {
    // Nor does the domain touch files: it goes through the FileStore port, in its plain JavaScript
    // modules too. Three read-only loaders keep node:fs (docs/architecture.md): the local drivers'
    // manifests, the intent templates and the data folder's disk usage; and the Lua driver host,
    // a program of its own run as the driver's child process, reads the driver's .lua files and
    // its standard streams (lua-host.mjs, lua-stdio.mjs).
    files: ['src/domain/**/*.ts', 'src/domain/**/*.mjs'],
    ignores: ['src/domain/drivers/local/manifest.ts', 'src/domain/intents/templates.ts', 'src/domain/system/disk-usage.ts', 'src/domain/drivers/local/lua-host.mjs', 'src/domain/drivers/local/lua-stdio.mjs'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [
          ...coreRestrictedPaths,
          ...['node:fs', 'fs', 'node:fs/promises', 'fs/promises'].map((name) => ({
            name,
            message: 'Domain code touches no files: use the FileStore port (src/platform/files.ts), which src/adapters/files implements.',
          })),
        ],
        patterns: coreRestrictedPatterns,
      }],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly' } },
  },
);
