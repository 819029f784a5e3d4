import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandResult, Reply } from '@agora/contracts';
import { generateKeyPair, parseKeyFile, type KeyPair } from '@agora/identity';
import { Agora, HttpTransport, type CommandName, type QueryName, type QueryParams, type QueryResult } from '@agora/sdk';

export interface AgentProfile {
  roles: string[];
  constitutions?: string[];
  specializations?: string[];
  trustScore?: number;
}

/**
 * A scripted fleet speaking to a running Agora through its HTTP gateway with @agora/sdk, as agents
 * without NATS would: every command signed with the agent's own key, every read (`query`) with the
 * operator's read token (a gateway closes reads by default). Keys are kept under `<dataDir>/demo-keys`
 * so a second run reuses the agents the first one registered.
 */
export class Fleet {
  private readonly keys = new Map<string, KeyPair>();
  private readonly clients = new Map<string, Agora>();
  private readonly reader: Agora;

  constructor(
    readonly url: string,
    private readonly operator: { agentId: string; key: KeyPair },
    private readonly keyDir: string,
    private readonly say: (line: string) => void,
  ) {
    this.reader = Agora.over(new HttpTransport(url, { agentId: operator.agentId, secretKey: operator.key.secretKey }));
  }

  static fromOperatorKeyFile(url: string, keyFile: string, dataDir: string, say: (line: string) => void): Fleet {
    if (!existsSync(keyFile)) throw new Error(`no operator key at ${keyFile}: start Agora first (npm start creates one) or pass --key`);
    const parsed = parseKeyFile(readFileSync(keyFile, 'utf8'));
    return new Fleet(url, { agentId: parsed.agentId ?? 'root', key: parsed }, join(dataDir, 'demo-keys'), say);
  }

  private keyOf(agentId: string): KeyPair {
    let key = this.keys.get(agentId);
    if (key) return key;
    const file = join(this.keyDir, `${agentId}.key.json`);
    if (existsSync(file)) {
      key = parseKeyFile(readFileSync(file, 'utf8'));
    } else {
      key = generateKeyPair();
      mkdirSync(this.keyDir, { recursive: true });
      writeFileSync(file, `${JSON.stringify({ agentId, ...key }, null, 2)}\n`, { mode: 0o600 });
    }
    this.keys.set(agentId, key);
    return key;
  }

  /** The public key of a fleet agent (its key file is created on first use). */
  publicKeyOf(agentId: string): string {
    return this.keyOf(agentId).publicKey;
  }

  /** The key file of a fleet agent (created on first use), for a process that signs as it (`agora mcp-proxy --key`). */
  keyFileOf(agentId: string): string {
    this.keyOf(agentId);
    return join(this.keyDir, `${agentId}.key.json`);
  }

  /** The secret key of a fleet agent, for what it signs besides commands (a dialectic resolution). */
  secretKeyOf(agentId: string): string {
    return this.keyOf(agentId).secretKey;
  }

  /** Registers the agents not registered yet (a re-run finds them there and changes nothing). */
  async enlist(agents: Record<string, AgentProfile>): Promise<void> {
    for (const [agentId, profile] of Object.entries(agents)) {
      const payload = { agentId, publicKey: this.keyOf(agentId).publicKey, displayName: agentId, constitutions: [], specializations: [], trustScore: 500, ...profile };
      const reply = await this.sendAs(this.operator.agentId, this.operator.key, 'RegisterAgent', payload);
      if (!reply.ok) throw new Error(`registering ${agentId}: ${reply.error.code}: ${reply.error.message}`);
    }
    this.say(`fleet: ${Object.keys(agents).join(', ')} registered by operator ${this.operator.agentId}`);
  }

  /** Sends a command signed by `agentId` (the operator's own id uses the operator key) and returns the reply. */
  send(agentId: string, type: string, payload: Record<string, unknown>): Promise<Reply<CommandResult>> {
    const key = agentId === this.operator.agentId ? this.operator.key : this.keyOf(agentId);
    return this.sendAs(agentId, key, type, payload);
  }

  /** Like send, but a refusal stops the demo. */
  async must(agentId: string, type: string, payload: Record<string, unknown>): Promise<CommandResult> {
    const reply = await this.send(agentId, type, payload);
    if (!reply.ok) throw new Error(`${agentId} ${type} was refused: ${reply.error.code}: ${reply.error.message}`);
    return reply.result;
  }

  /** The operator that registers the fleet. */
  get operatorId(): string {
    return this.operator.agentId;
  }

  /** The SDK client signing as a fleet agent (for what it does itself: its model calls). */
  clientOf(agentId: string): Agora {
    return this.clientAs(agentId, agentId === this.operator.agentId ? this.operator.key : this.keyOf(agentId));
  }

  private clientAs(actor: string, key: KeyPair): Agora {
    let client = this.clients.get(actor);
    if (!client) {
      client = Agora.over(new HttpTransport(this.url), { signer: { secretKey: key.secretKey, agentId: actor } });
      this.clients.set(actor, client);
    }
    return client;
  }

  private sendAs(actor: string, key: KeyPair, type: string, payload: Record<string, unknown>): Promise<Reply<CommandResult>> {
    return this.clientAs(actor, key).trySend(type as CommandName, payload as never);
  }

  /** A query (`GetProposal`, `GetVotingStats`, ...); a refusal stops the demo. */
  query<N extends QueryName>(name: N, params: QueryParams<N>): Promise<QueryResult<N>> {
    return this.reader.query(name, params);
  }
}

/** Polls `check` every 200 ms until it returns something, for at most `timeoutMs`. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
