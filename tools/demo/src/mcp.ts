import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agora, onVoteRequested, type RoleLoop } from '@agora/sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Fleet } from './fleet.js';
import { CAST as VOTING_CAST } from './voting.js';

type Say = (line: string) => void;

/**
 * The voting demo's deployer and all of its validators: a vote draws from every validator registered,
 * so each one the voting demo (run before or after this one) registers must have a loop here that votes.
 */
const VALIDATORS = Object.fromEntries(Object.entries(VOTING_CAST).filter(([, profile]) => profile.roles.includes('validator')));
const CAST = { deployer: VOTING_CAST.deployer, ...VALIDATORS };
/** How long the proxy holds a call for its vote before it refuses it, saying which validators did not vote (below the MCP client's 60 s request timeout). */
const DECISION_TIMEOUT_S = 30;

/** The proxy's policy: storing a credential in the shared memory is put to a vote; deleting is never allowed. */
const POLICY = {
  server: 'memory',
  rules: [
    { tool: 'create_entities', arguments: { entities: { $any: { entityType: 'credential' } } }, decision: 'vote', riskLevel: 'high', reason: 'storing a credential in shared memory' },
    { tool: 'delete_entities', decision: 'deny', reason: 'the memory is append-only' },
  ],
};

const CLI = fileURLToPath(new URL('../../../apps/cli/dist/main.js', import.meta.url));
const MEMORY_SERVER = () => join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/package.json')), 'dist', 'index.js');

/**
 * An MCP client's risky tool call held, voted on, then run or refused: `agora mcp-proxy` in front of
 * the MCP memory server (@modelcontextprotocol/server-memory), the deployer's model calling tools
 * through it, the voting demo's five validators voting from their SDK role loops.
 */
export async function mcpDemo(fleet: Fleet, say: Say, options: { url: string }): Promise<void> {
  await fleet.enlist(CAST);
  const dir = mkdtempSync(join(tmpdir(), 'agora-demo-mcp-'));
  const memoryFile = join(dir, 'memory.jsonl');
  writeFileSync(join(dir, 'policy.json'), JSON.stringify(POLICY, null, 2));
  const clients: Agora[] = [];
  const loops: RoleLoop[] = [];
  let client: Client | undefined;
  try {
    for (const validator of Object.keys(VALIDATORS)) {
      const agora = await Agora.connect({ url: options.url, signer: { keyFile: fleet.keyFileOf(validator) } });
      clients.push(agora);
      const loop = onVoteRequested(agora, async ({ session }) => {
        const production = (session.summary ?? '').includes('"name":"prod-');
        const vote = production
          ? { decision: 'deny' as const, reasoning: 'A production credential does not belong in a shared memory any agent can read.', confidence: 0.9 }
          : { decision: 'approve' as const, reasoning: 'A staging token, scoped and short-lived: fine to remember.', confidence: 0.85 };
        say(`  ${validator} votes ${vote.decision}: ${vote.reasoning}`);
        return vote;
      });
      loops.push(loop);
      await loop.ready;
    }
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp-proxy', '--policy', join(dir, 'policy.json'), '--key', fleet.keyFileOf('deployer'), '--url', options.url, '--decision-timeout', String(DECISION_TIMEOUT_S), '--', process.execPath, MEMORY_SERVER()],
      env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: memoryFile },
      stderr: 'ignore',
    });
    client = new Client({ name: 'deployer-model', version: '1.0.0' });
    await client.connect(transport);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    say(`\nagora mcp-proxy in front of the MCP memory server, signing as deployer; its tools pass through: ${tools.join(', ')}`);
    say(`policy: create_entities with a credential -> a vote of validators; delete_entities -> refused; anything else passes`);
    const call = async (name: string, args: Record<string, unknown>) => (await client!.callTool({ name, arguments: args })) as CallToolResult;
    const refusalOf = (result: CallToolResult) => (result.isError ? (result.content[0] as { text: string }).text : undefined);
    const show = (result: CallToolResult) => {
      const refused = refusalOf(result);
      return refused === undefined ? 'ran' : `refused: ${refused.slice(0, 200)}`;
    };
    /** A call whose outcome the demo shows: anything else (a vote nobody finished) stops it with the whole refusal, which names who did not vote. */
    const expect = (what: string, result: CallToolResult, outcome: 'ran' | RegExp) => {
      const refused = refusalOf(result);
      if (outcome === 'ran' ? refused !== undefined : refused === undefined || !outcome.test(refused)) throw new Error(`${what}: expected it to ${outcome === 'ran' ? 'run' : `be refused (${outcome})`}, but it ${refused === undefined ? 'ran' : `was refused: ${refused}`}`);
      return result;
    };
    const entity = (name: string, entityType: string, observation: string) => ({ entities: [{ name, entityType, observations: [observation] }] });

    say('\n1. An ordinary call passes straight through');
    say(`  create_entities(release-notes, note): ${show(await call('create_entities', entity('release-notes', 'note', 'v4.2 ships on Friday')))}`);

    say('\n2. A risky call is held for a vote, approved, then run');
    say(`  => create_entities(staging-token, credential): ${show(expect('the staging token', await call('create_entities', entity('staging-token', 'credential', 'scoped to staging, expires in 24 h')), 'ran'))}`);

    say('\n3. A risky call the validators refuse never reaches the server');
    say(`  => create_entities(prod-db-password, credential): ${show(expect('the production password', await call('create_entities', entity('prod-db-password', 'credential', 'the production database password')), /^tool_call_denied: the validators' vote refused/))}`);

    say('\n4. A call the policy forbids is refused without a vote');
    say(`  delete_entities(release-notes): ${show(await call('delete_entities', { entityNames: ['release-notes'] }))}`);

    const stored = readFileSync(memoryFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; name: string });
    say(`\nwhat the memory server itself stored: ${stored.filter((r) => r.type === 'entity').map((r) => r.name).join(', ')}`);
    const { sessions } = await fleet.query('ListVotingSessions', { requestingAgent: 'deployer', limit: 10 });
    for (const s of sessions.filter((x) => x.actionType.startsWith('mcp_tool_call:')).slice(0, 2)) {
      const view = await fleet.query('GetVotingSession', { sessionId: s.sessionId });
      const t = view.toolCall;
      say(`in the log: session ${s.sessionId} ${view.actionType}, ${view.consensus?.replace(/_/g, ' ')} -> ${view.finalDecision}; call ${t?.callDigest.slice(0, 12)}…, ${t?.releasedAt ? `released once, outcome ${t.outcome}, result ${t.resultDigest?.slice(0, 12)}…` : 'never released'}`);
    }
  } finally {
    await Promise.all(loops.map((l) => l.stop()));
    await client?.close().catch(() => undefined);
    await Promise.all(clients.map((c) => c.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}
