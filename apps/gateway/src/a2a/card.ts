/** Agora's Agent Card (A2A 1.0; @a2a-js/sdk translates it for clients that ask for 0.3). */
import type { AgentCard, AgentSkill } from '@a2a-js/sdk';
import { SIGNING_TAGS } from '@agora/contracts';
import { SIGNED_COMMAND_EXTENSION } from './draft.js';
import { AGORA_SKILLS } from './skills.js';

/** The path of /a2a's JSON-RPC endpoint on the gateway. */
export const A2A_PATH = '/a2a';

/** The security scheme of the card: the read token every other read of the gateway takes. */
export const READ_TOKEN_SCHEME = 'agoraReadToken';

/**
 * A skill's examples are messages that start its task as they are (sent as text or as a data part):
 * the start command's type and fields, unsigned. Agora answers with a task in input-required that
 * carries the command it drafted from them, to sign and send in the same task (draft.ts).
 */
function skillOf(skill: (typeof AGORA_SKILLS)[number]): AgentSkill {
  return {
    id: skill.id,
    name: skill.name,
    description: `${skill.description} A message with the command's fields but no signature (as the examples) opens the task in input-required with the command drafted, to sign and send in a message of the same task.`,
    tags: skill.tags,
    examples: skill.examples.map((example) => JSON.stringify({ command: { type: example.type, payload: example.payload } })),
    inputModes: ['application/json', 'text/plain'],
    outputModes: ['application/json', 'text/plain'],
    securityRequirements: [],
  };
}

export function agentCard(options: { url: string; version: string; readsClosed: boolean; documentationUrl: string }): AgentCard {
  const endpoint = `${options.url.replace(/\/+$/, '')}${A2A_PATH}`;
  return {
    name: 'Agora',
    description:
      "Governance for fleets of AI agents: a tribunal that reviews proposals, weighted votes of validators on risky actions, a human-gated panel of models, and recovery by dialectic for a paused agent. Each skill takes a command the caller signs with its own registered Ed25519 key; the task follows Agora's event log until the decision, which comes back as the task's artifact.",
    supportedInterfaces: [
      { url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
      { url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '0.3', tenant: '' },
    ],
    provider: { organization: 'Agora', url: options.url },
    version: options.version,
    documentationUrl: options.documentationUrl,
    capabilities: {
      streaming: true,
      pushNotifications: true,
      // Not `required`: a client that does not know it still gets its task, in input-required with the command to sign.
      extensions: [
        {
          uri: SIGNED_COMMAND_EXTENSION,
          description:
            "Every command a task sends to Agora is signed by the caller with its own registered Ed25519 key (the signing specification, docs/any-language-agents.md): a message carries it as {\"command\": <signed envelope>} in a data part. A message without one opens the task in input-required; its status carries the unsigned envelope Agora drafted (data: command) and the signing text's version (data: signing.version), to sign and send in a later message of the same task. tasks/cancel carries the signed cancellation as metadata.command.",
          required: false,
          params: { signingVersion: SIGNING_TAGS.command },
        },
      ],
      extendedAgentCard: false,
    },
    securitySchemes: {
      [READ_TOKEN_SCHEME]: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: { description: "An Agora read token signed by the caller's own registered key (agora token --key <key file>): it names the agent the A2A caller is; the commands it sends must be that agent's, signed", scheme: 'Bearer', bearerFormat: 'Agora read token (EdDSA)' },
        },
      },
    },
    securityRequirements: options.readsClosed ? [{ schemes: { [READ_TOKEN_SCHEME]: { list: [] } } }] : [],
    defaultInputModes: ['application/json', 'text/plain'],
    defaultOutputModes: ['application/json', 'text/plain'],
    skills: AGORA_SKILLS.map(skillOf),
    signatures: [],
  };
}
