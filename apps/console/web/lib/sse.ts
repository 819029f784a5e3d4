/** The SSE client lives with the package's Node-side code (src/sse-client.ts) so that Node clients and tests use the same one. */
export * from '../../src/sse-client';
