/**
 * A participant's process making one model call, as the fleet's participants make theirs: an
 * Agora client signing as its agent (the gateway's URL, its key file), the provider layer from the
 * environment (pointed at the stand-ins by base URL), and recordedModelCalls. Prints
 * `participant: ready`, then `outcome <json>` (exit 0) or `refused <code> <json details>` (exit 2).
 *
 * Its settings in the environment (so that the tests' process helpers start it like any Agora process):
 * AGORA_URL (the gateway), AGENT_KEY_FILE, CALL_ID, CALL_MODEL, CALL_PROMPT, and the providers' variables.
 */
import { AgoraError } from '@agora/contracts';
import { ProviderLayer, providersConfigFromEnv } from '@agora/providers';
import { Agora } from '@agora/sdk';
import { z } from 'zod';
import { recordedModelCalls } from '../../src/index.js';

const Verdict = z.object({ verdict: z.enum(['approve', 'object']), reasoning: z.string() }).strict();

const [url, keyFile, callId, model, prompt] = ['AGORA_URL', 'AGENT_KEY_FILE', 'CALL_ID', 'CALL_MODEL', 'CALL_PROMPT'].map((name) => process.env[name] ?? '') as [string, string, string, string, string];
const agora = await Agora.connect({ url, signer: { keyFile } });
const calls = recordedModelCalls(agora, new ProviderLayer(providersConfigFromEnv(process.env), process.env), { processName: 'the test participant' });
console.log('participant: ready');
try {
  const outcome = await calls.call({ callId, purpose: 'review proposal p-1 round 1', model, system: 'You review proposals under the risk constitution.', prompt, schema: Verdict, schemaName: 'verdict', maxOutputTokens: 200 });
  console.log(`outcome ${JSON.stringify(outcome)}`);
} catch (error) {
  if (!(error instanceof AgoraError)) throw error;
  console.log(`refused ${error.code} ${JSON.stringify(error.details ?? {})} ${error.message}`);
  process.exitCode = 2;
} finally {
  await agora.close();
}
