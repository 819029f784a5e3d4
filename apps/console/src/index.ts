import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The directory of the built console (index.html and its hashed assets), as `npm run build`
 * writes it: `apps/console/dist/public`. The same path from the sources and from dist/.
 */
export function consoleAssetsDir(): string {
  return fileURLToPath(new URL('../dist/public/', import.meta.url));
}

/** True when the console has been built (its index.html is there). */
export function consoleBuilt(dir = consoleAssetsDir()): boolean {
  return existsSync(`${dir.replace(/\/+$/, '')}/index.html`);
}

export { openEventStream, type AgoraEvent, type EventStreamOptions, type StreamStatus } from './sse-client.js';
