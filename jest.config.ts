/**
 * @jest-config-loader ts-node
 * @jest-config-loader-options {"transpileOnly": true, "skipProject": true, "compilerOptions": {"module": "CommonJS", "moduleResolution": "bundler"}}
 */
import type { Config } from 'jest';

// This file is loaded by ts-node (docblock above) in transpile-only mode with its own
// CommonJS settings instead of tsconfig.json (whose nodenext settings ts-node rejects for
// CommonJS output): saves ~3 s per `npm test` run. It is not type-checked by tsc.
//
// ESM flavour of the NestJS app template's Jest config: no preset, ts-jest transform
// with useESM. Run it through `npm test` (tools/run-tests.mjs: two workers, then
// test/sandbox and test/chaos in band).
//
// Redis: each test file gets its own server from test/support/redis.ts (startRedis). The
// global setup only makes a temp dir the files of one run share (the packed tarball,
// test/support/packed.ts); the teardown removes it.
const config: Config = {
  rootDir: '.',
  // in the checkout, not the system's temp dir: a run leaves nothing behind outside it
  cacheDirectory: '<rootDir>/node_modules/.cache/jest',
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json'],
  testMatch: ['<rootDir>/test/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    // Examples and the sample import the package by name, as users do.
    '^relq$': '<rootDir>/lib/index.ts',
    '^relq/(nest|metrics|tracing|testing|dashboard|dashboard/nest|dashboard/bull-board)$': '<rootDir>/lib/$1/index.ts',
    // Source uses nodenext-style `./x.js` specifiers; map them back to the .ts file.
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // RELQ_NEST_DIR=<dir with another NestJS major installed> runs the tests against it
    // (tools/test-nest-major.mjs).
    ...(process.env.RELQ_NEST_DIR
      ? { '^(@nestjs/[a-z-]+|reflect-metadata)$': `${process.env.RELQ_NEST_DIR}/node_modules/$1` }
      : {}),
  },
  transform: {
    '^.+\\.ts$': [
      'ts-jest',
      {
        useESM: true,
        // An object here means: read ./tsconfig.json (found from rootDir) and override
        // only these options. isolatedModules => per-file transpile (ts.transpileModule),
        // no type checking in Jest: measured ~2-3x faster (cold 12s -> 5s on the harness
        // spec; warm 12s -> 4s on 4 specs importing lib/core), and ts-jest's type-checking
        // mode does not support module "nodenext" anyway (warning TS151002).
        // Types are checked by `npm run typecheck` (tsc -p tsconfig.json --noEmit).
        // Consequence: a type-only symbol that is re-exported or used in a decorated
        // constructor signature must be imported/exported with `type` (`import { type X }`),
        // otherwise the ESM link fails in Jest ("does not provide an export named 'X'").
        tsconfig: { isolatedModules: true },
      },
    ],
  },
  testTimeout: 30_000,
  // ESM modules loaded through vm are not freed between files: a worker that grew past this
  // after a file is replaced by a fresh one.
  workerIdleMemoryLimit: '2GB',
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
};

export default config;
