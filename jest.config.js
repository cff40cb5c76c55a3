/** Three projects: unit specs beside the code, integration specs against the local Redis,
 * and end-to-end specs that start the built api and worker processes. */
const moduleNameMapper = {
  '^@codemode/(contracts|config|events|fleet|cells|fairness|sandbox|telemetry|client|catalog|shell|tools|store)$': '<rootDir>/libs/$1/src',
};
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }],
};
const common = { rootDir: __dirname, testEnvironment: 'node', moduleNameMapper, transform, moduleFileExtensions: ['ts', 'js', 'json'] };
module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,eslint-rules}/**/*.spec.ts'] },
    { ...common, displayName: 'int', testMatch: ['<rootDir>/{apps,libs}/**/*.int-spec.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
  ],
  maxWorkers: 2,
  // A worker keeps every module and transform of the files it ran; on Node 24 one grew until it
  // ran out of heap late in a full run. Jest starts a new one between files past this size.
  workerIdleMemoryLimit: '1GB',
  testTimeout: 30000,
};
