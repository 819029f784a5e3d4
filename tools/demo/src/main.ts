#!/usr/bin/env node
/** `npm run demo -- <scenario>`: a scripted fleet of agents against a running Agora. */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chamberDemo } from './chamber.js';
import { Fleet } from './fleet.js';
import { debateDemo } from './debate.js';
import { dialecticDemo } from './dialectic.js';
import { mcpDemo } from './mcp.js';
import { modelFleetDemo } from './model-fleet.js';
import { tribunalDemo } from './tribunal.js';
import { votingDemo } from './voting.js';

const SCENARIOS: Record<string, string> = {
  tribunal: "the tribunal seed's stories: Space-OS corrected in round 2, a silent reviewer at the deadline, a deadlock decided by an operator, an executive proceeding despite objections",
  chamber: 'the Deliberation Chamber: starts its own Agora and stand-in provider servers (or calls the real providers when OPENAI_API_KEY, ANTHROPIC_API_KEY and GOOGLE_GENERATIVE_AI_API_KEY are set), a session approved with the operator key, its phases, outcome and cost',
  voting: 'validators approve a high-risk deploy; a critical action that is not unanimous waits for a human',
  dialectic: 'a paused agent and its reviewer converge on a signed resolution; another recovery is escalated to a human',
  mcp: "an MCP client's risky tool calls through agora mcp-proxy (in front of the MCP memory server): held, voted on by validators, then run or refused",
  fleet: 'every role played by models (agora fleet run on examples/fleet/fleet.json): starts its own Agora and stand-in provider servers (or the real providers when the three API keys are set); a proposal reviewed by four reviewers, revised and approved; a vote by three validators; a recovery by two agents; a debate; a chamber session; each decision with its cost',
  debate: 'the crux debate "Bitcoin is digital gold" (Saylor against Hayes): scripted, or personas played by models when a provider key is set; prints the stages and the final ThreadCrux',
};

const HELP = `Usage: npm run demo -- <scenario> [options]     (or npm run demo:tribunal, npm run demo:chamber)

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
  --metrics <url>   the projections' metrics (default http://127.0.0.1:$METRICS_PORT/metrics, METRICS_PORT
                    as Agora was started with, default 9464)
  -h, --help        this help

Environment (debate): OPENAI_API_KEY, ANTHROPIC_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY set: the personas
are played by models through the provider layer (its settings: see docs/configuration.md);
AGORA_DEBATE_MODELS=saylor=<provider:model>,hayes=<provider:model> picks their models; AGORA_DEBATE_BUDGET
(default 1) is each debater's model budget, its calls reserved against it and recorded in its ledger.`;

/** The projections' /metrics where `npm start` serves it: METRICS_PORT (and METRICS_HOST when it names one address). */
export function metricsUrlFromEnv(env: NodeJS.ProcessEnv): string {
  const port = env['METRICS_PORT']?.trim() || '9464';
  const host = env['METRICS_HOST']?.trim();
  return `http://${!host || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}/metrics`;
}

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
  if (scenario === 'chamber' || scenario === 'fleet') {
    try {
      await (scenario === 'chamber' ? chamberDemo : modelFleetDemo)(say, values.data ? { dataDir: dataDir } : {});
      return 0;
    } catch (error) {
      console.error(`demo: ${(error as Error).message}`);
      return 1;
    }
  }
  try {
    const fleet = Fleet.fromOperatorKeyFile(url, values.key ?? resolve(dataDir, 'operator.key.json'), dataDir, say);
    say(`demo ${scenario} against ${url}\n`);
    const run = Date.now().toString(36);
    if (scenario === 'tribunal') await tribunalDemo(fleet, say, { metricsUrl: values.metrics ?? metricsUrlFromEnv(process.env), run });
    else if (scenario === 'voting') await votingDemo(fleet, say, { run, consoleUrl: url });
    else if (scenario === 'dialectic') await dialecticDemo(fleet, say, { consoleUrl: url });
    else if (scenario === 'mcp') await mcpDemo(fleet, say, { url });
    else await debateDemo(fleet, say, { run, consoleUrl: url, env: process.env });
    return 0;
  } catch (error) {
    const message = (error as Error).message;
    // Agora started on another PORT (or host): say how to point the demo at it.
    const hint = /cannot reach the gateway/.test(message) ? `\nIs Agora running there? npm start listens on PORT (8080 unless set): give the demo --url http://127.0.0.1:<PORT>, or set AGORA_URL.` : '';
    console.error(`demo: ${message}${hint}`);
    return 1;
  }
}

process.exitCode = await main();
