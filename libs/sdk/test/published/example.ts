/**
 * A program written against the published @agora/sdk, as a user of the npm package writes one: the
 * e2e test (../published.e2e.spec.ts) type-checks it strictly against the installed declarations and
 * runs it on Node against a running Agora. Five validators answer from their role loops; the
 * deployer asks for a vote, reads the session back and waits on the log for the decision.
 * Settings: AGORA_URL (the gateway), AGORA_KEYS (a folder of <agentId>.key.json files), REQUEST_ID.
 */
import { join } from 'node:path';
// eslint-disable-next-line @nx/enforce-module-boundaries -- a user's program imports the package by its name: it runs outside the repository
import { Agora, AgoraError, onVoteRequested, type QueryResult, type RoleLoop } from '@agora/sdk';

const VALIDATORS = ['aegis', 'ledger', 'pilot', 'sage', 'tally'];

function setting(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const url = setting('AGORA_URL');
const keys = setting('AGORA_KEYS');
const requestId = setting('REQUEST_ID');
const connect = (agentId: string): Promise<Agora> => Agora.connect({ url, signer: { keyFile: join(keys, `${agentId}.key.json`) } });

/** Never called: the compiler must refuse what the contracts do not allow, or the types are not the contracts'. */
export async function typesAreTheContracts(client: Agora): Promise<void> {
  // @ts-expect-error: no such command
  await client.send('NoSuchCommand', {});
  // @ts-expect-error: a voting session's risk level is one of the seed's levels
  await client.send('CreateVotingSession', { requestId, actionType: 'deploy', riskLevel: 'enormous', summary: 'x' });
  const session: QueryResult<'GetVotingSessionByRequest'> = await client.query('GetVotingSessionByRequest', { requestId });
  // @ts-expect-error: a view's fields are typed
  const status: number = session.status;
  void status;
}

const validators = await Promise.all(VALIDATORS.map(connect));
const loops: RoleLoop[] = validators.map((client) =>
  onVoteRequested(client, async ({ session }) => ({ decision: 'approve', reasoning: `${session.actionType} is routine`, confidence: 0.9 })),
);
await Promise.all(loops.map((loop) => loop.ready));

const deployer = await connect('deployer');
try {
  const created = await deployer.send('CreateVotingSession', { requestId, actionType: 'deploy_production', riskLevel: 'high', summary: 'Roll out 4.2' });
  const session = await deployer.query('GetVotingSessionByRequest', { requestId });
  const decided = await deployer.waitForDecision(session.sessionId, { after: created.position, timeoutMs: 90_000 });
  console.log(JSON.stringify({ sessionId: session.sessionId, decision: decided.recommendation?.decision, votes: decided.votes.length, validators: decided.validators.length }));
} catch (error) {
  console.error(error instanceof AgoraError ? `refused: ${error.code} ${error.message}` : error);
  process.exitCode = 1;
} finally {
  await Promise.all(loops.map((loop) => loop.stop()));
  await Promise.all([...validators, deployer].map((client) => client.close()));
}
