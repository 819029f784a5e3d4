#!/usr/bin/env node
/** `npm run demo -- <scenario>`: a scripted fleet of agents against a running Agora. */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Fleet } from './fleet.js';
import { tribunalDemo } from './tribunal.js';

const SCENARIOS: Record<string, string> = {
  tribunal: "the tribunal seed's stories: Space-OS corrected in round 2, a silent reviewer at the deadline, a deadlock decided by an operator, an executive proceeding despite objections",
};

const HELP = `Usage: npm run demo -- <scenario> [options]     (or npm run demo:tribunal)

Plays a scripted fleet of agents against a running Agora (start it first: npm start) through its
HTTP gateway, every command signed by the agent that sends it, and prints what happened.

Scenarios:
${Object.entries(SCENARIOS)
  .map(([name, what]) => `  ${name.padEnd(10)} ${what}`)
  .join('\n')}

Options:
  --url <url>       the gateway (default $AGORA_URL or http://127.0.0.1:8080)
  --key <file>      the operator's key file (default <data dir>/operator.key.json, which npm start creates)
  --data <dir>      Agora's data directory (default $AGORA_DATA_DIR or ./data); the fleet's keys go in <dir>/demo-keys
  --metrics <url>   the projections' metrics (default http://127.0.0.1:9464/metrics)
  -h, --help        this help`;

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, options: { url: { type: 'string' }, key: { type: 'string' }, data: { type: 'string' }, metrics: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  } catch (error) {
    console.error(`demo: ${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const scenario = positionals[0];
  if (!scenario || !SCENARIOS[scenario] || positionals.length > 1) {
    console.error(`demo: ${scenario ? `unknown scenario ${JSON.stringify(positionals.join(' '))}` : 'name a scenario'}\n\n${HELP}`);
    return 2;
  }
  const dataDir = resolve(values.data ?? process.env['AGORA_DATA_DIR'] ?? './data');
  const url = (values.url ?? process.env['AGORA_URL'] ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const say = (line: string) => console.log(line);
  try {
    const fleet = Fleet.fromOperatorKeyFile(url, values.key ?? resolve(dataDir, 'operator.key.json'), dataDir, say);
    say(`demo ${scenario} against ${url}\n`);
    await tribunalDemo(fleet, say, { metricsUrl: values.metrics ?? 'http://127.0.0.1:9464/metrics', run: Date.now().toString(36) });
    return 0;
  } catch (error) {
    console.error(`demo: ${(error as Error).message}`);
    return 1;
  }
}

process.exitCode = await main();
