/**
 * The fleet file: which agents a fleet runs, with their keys, roles, constitutions, models and
 * budgets (JSON; the format is documented in docs/fleet.md). Checked with zod: an error names the
 * path of what is wrong (`agents[2].model: ...`). Relative paths are relative to the fleet file.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { AgentId, Constitution, Specialization, TrustScore } from '@agora/contracts';
import { MODEL_REF_PATTERN } from '@agora/providers';
import { z } from 'zod';
import { parseConfigText } from '@agora/sdk';

/** The roles a fleet agent can play. `dialectic`: its turns in recoveries (as the paused agent, or as the reviewer drawn for another). */
export const FLEET_ROLES = ['reviewer', 'executive', 'validator', 'dialectic', 'debater'] as const;
export type FleetRole = (typeof FLEET_ROLES)[number];

const ModelRef = z.string().regex(MODEL_REF_PATTERN, 'a model is written <provider>:<model>, e.g. openai:gpt-4.1');
const Budget = z.number().positive('a budget is a positive amount in the provider currency (AGORA_COST_CURRENCY, default USD)');

const ModelSettings = {
  model: ModelRef.optional(),
  budget: Budget.optional().describe('Most this agent may spend on model calls'),
  maxOutputTokens: z.number().int().min(16).max(32_000).optional(),
  temperature: z.number().min(0).max(2).optional(),
};

export const FleetAgent = z
  .strictObject({
    id: AgentId,
    keyFile: z.string().min(1).describe('Its Ed25519 key file (created when missing)'),
    roles: z.array(z.enum(FLEET_ROLES)).min(1),
    constitutions: z.array(Constitution).max(16).default([]).describe('reviewer: the constitutions it reviews for'),
    specializations: z.array(Specialization).max(16).default([]).describe('validator: what it judges from'),
    trustScore: TrustScore.optional().describe('Set when the fleet registers it'),
    persona: z.string().max(500).optional().describe('debater: who it plays (OpenDebate names it too)'),
    maxRevisions: z.number().int().min(1).max(10).optional().describe('executive: revisions of one proposal at most (default 3)'),
    ...ModelSettings,
  })
  .superRefine((agent, context) => {
    if (agent.roles.includes('reviewer') && agent.constitutions.length === 0) context.addIssue({ code: 'custom', path: ['constitutions'], message: 'a reviewer needs at least one constitution' });
    if (new Set(agent.roles).size !== agent.roles.length) context.addIssue({ code: 'custom', path: ['roles'], message: 'a role is listed twice' });
  });
export type FleetAgent = z.output<typeof FleetAgent>;

export const FleetFile = z
  .strictObject({
    prompts: z.string().min(1).optional().describe('A directory of prompt files that replace the shipped ones of the same name'),
    state: z.string().min(1).optional().describe('Where each role loop keeps its checkpoint (default .agora-fleet next to the fleet file)'),
    defaults: z.strictObject(ModelSettings).default({}).describe('For every agent that does not say'),
    agents: z.array(FleetAgent).min(1).max(200),
  })
  .superRefine((fleet, context) => {
    const seen = new Map<string, number>();
    fleet.agents.forEach((agent, index) => {
      if (seen.has(agent.id)) context.addIssue({ code: 'custom', path: ['agents', index, 'id'], message: `${agent.id} is already agents[${seen.get(agent.id)}]` });
      else seen.set(agent.id, index);
      if (agent.model === undefined && fleet.defaults.model === undefined) context.addIssue({ code: 'custom', path: ['agents', index, 'model'], message: 'no model: give one here or in defaults.model' });
    });
  });

/** An agent as the fleet runs it: paths resolved, defaults applied. */
export interface FleetAgentConfig extends Omit<FleetAgent, 'model' | 'budget'> {
  model: string;
  budget: number | undefined;
}

export interface FleetConfig {
  /** The fleet file's path (for messages). */
  source: string;
  prompts: string | undefined;
  state: string;
  agents: FleetAgentConfig[];
}

/** A fleet file that is not valid: every problem, each with its path. */
export class FleetFileError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`${source}: ${problems.length === 1 ? problems[0] : `${problems.length} problems:\n${problems.map((p) => `  ${p}`).join('\n')}`}`);
    this.name = 'FleetFileError';
  }
}

const pathText = (path: readonly PropertyKey[]): string => path.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key)), '') || '(root)';

/** Checks a fleet file's text (JSON): the fleet with its paths resolved against `source`'s directory, or a FleetFileError naming each problem's path. */
export function parseFleetFile(text: string, source: string): FleetConfig {
  let json: unknown;
  try {
    json = parseConfigText(text, source);
  } catch (error) {
    throw new FleetFileError(source, [(error as Error).message]);
  }
  const parsed = FleetFile.safeParse(json);
  if (!parsed.success) throw new FleetFileError(source, parsed.error.issues.map((issue) => `${pathText(issue.path)}: ${issue.message}`));
  const dir = dirname(resolve(source));
  const at = (path: string) => (isAbsolute(path) ? path : resolve(dir, path));
  const { defaults } = parsed.data;
  return {
    source,
    prompts: parsed.data.prompts === undefined ? undefined : at(parsed.data.prompts),
    state: at(parsed.data.state ?? '.agora-fleet'),
    agents: parsed.data.agents.map((agent) => {
      const maxOutputTokens = agent.maxOutputTokens ?? defaults.maxOutputTokens;
      const temperature = agent.temperature ?? defaults.temperature;
      return {
        ...agent,
        keyFile: at(agent.keyFile),
        model: (agent.model ?? defaults.model)!,
        budget: agent.budget ?? defaults.budget,
        ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
        ...(temperature === undefined ? {} : { temperature }),
      };
    }),
  };
}

/** Reads and checks a fleet file. */
export function readFleetFile(path: string): FleetConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new FleetFileError(path, [`cannot read it: ${(error as Error).message}`]);
  }
  return parseFleetFile(text, path);
}
