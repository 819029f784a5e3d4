/**
 * The governed-tool-call policy (governed.ts) of `agora mcp-proxy` and of the Vercel AI SDK adapter:
 * which tool calls wait for an Agora decision. A JSON file (or YAML, named .yaml or .yml), checked by the schema below:
 *
 *   {
 *     "server": "memory",
 *     "rules": [
 *       { "tool": "delete_entities", "decision": "vote", "riskLevel": "high" },
 *       { "tool": "create_entities", "arguments": { "entities": { "$any": { "entityType": "credential" } } },
 *         "decision": "vote", "riskLevel": "critical", "votingTimeoutMs": 120000 },
 *       { "tool": "*", "decision": "allow" }
 *     ]
 *   }
 *
 * The first rule whose `server` (default: any), `tool` (a name or `*`) and `arguments` match decides;
 * a call no rule matches passes through. Decisions: `vote` (a voting session of validators at the
 * rule's risk level, seed 002), `person` (a voting session with no validators, waiting at once in
 * the operator's inbox for a person to approve or deny: `decider: person`), `tribunal` (a tribunal
 * proposal reviewed by the reviewers as any proposal; the call runs once it is approved), `deny`
 * (refused without asking), `allow` (passes through).
 *
 * Arguments are matched structurally, never by a regex over text (a regex over text is easy to get around): a pattern is
 * - a JSON scalar: equal to the value;
 * - an object of keys: the value is an object and each key's pattern matches the value's key
 *   (keys the pattern does not name are ignored);
 * - an array: the value is an array of the same length, element by element;
 * - an operator object, exactly one key starting with `$`: `{"$any": p}` an array with an element
 *   matching p; `{"$all": p}` an array whose elements all match p; `{"$in": [v, ...]}` equal to one of
 *   the values; `{"$prefix": "s"}` a string starting with s; `{"$exists": true|false}` the key is
 *   present or absent; `{"$not": p}` p does not match; `{"$gte": n}` / `{"$lte": n}` numbers.
 */
import { readFileSync } from 'node:fs';
import { RiskLevel } from '@agora/contracts';
import { z } from 'zod';
import { parseConfigText } from './config-text.js';

const Json: z.ZodType<unknown> = z.lazy(() => z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(Json), z.record(z.string(), Json)]));

export const PolicyRule = z
  .object({
    server: z.string().min(1).optional().describe("The upstream server's name (the policy's `server`, or the upstream's own name); default any"),
    tool: z.string().min(1).describe('A tool name, or `*` for any'),
    arguments: z.record(z.string(), Json).optional().describe('A structural pattern over the call\'s arguments (see the operators); default any arguments'),
    decision: z.enum(['vote', 'person', 'tribunal', 'deny', 'allow']),
    riskLevel: RiskLevel.default('high').describe('For `vote` and `person`: the risk level the session is created at (seed 002); `critical` needs a unanimous vote'),
    votingTimeoutMs: z.number().int().min(1000).max(86_400_000).optional().describe("For `vote`: the session's timeout; default the voting configuration's"),
    reason: z.string().max(1000).optional().describe('Why the rule exists: shown to validators and in a refusal'),
  })
  .strict();
export type PolicyRule = z.output<typeof PolicyRule>;

export const ToolPolicy = z
  .object({
    server: z.string().min(1).optional().describe('The name the upstream server is known by in this policy and in the log; default the name it reports'),
    rules: z.array(PolicyRule).max(1000),
  })
  .strict();
export type ToolPolicy = z.output<typeof ToolPolicy>;

/** Reads and checks a policy file; a bad file is an error that says where. */
export function readToolPolicy(file: string): ToolPolicy {
  let raw: unknown;
  try {
    raw = parseConfigText(readFileSync(file, 'utf8'), file);
  } catch (error) {
    throw new Error(`policy ${file}: ${(error as Error).message}`, { cause: error });
  }
  const parsed = ToolPolicy.safeParse(raw);
  if (!parsed.success) throw new Error(`policy ${file}: ${z.prettifyError(parsed.error)}`);
  for (const [i, rule] of parsed.data.rules.entries()) if (rule.arguments) checkPattern(rule.arguments, `rules[${i}].arguments`);
  return parsed.data;
}

const OPERATORS = ['$any', '$all', '$in', '$prefix', '$exists', '$not', '$gte', '$lte'] as const;
type Operator = (typeof OPERATORS)[number];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const operatorOf = (pattern: Record<string, unknown>): Operator | undefined => {
  const keys = Object.keys(pattern);
  return keys.length === 1 && keys[0]!.startsWith('$') ? (keys[0] as Operator) : undefined;
};

function checkPattern(pattern: unknown, at: string): void {
  if (Array.isArray(pattern)) return pattern.forEach((p, i) => checkPattern(p, `${at}[${i}]`));
  if (!isObject(pattern)) return;
  const keys = Object.keys(pattern);
  if (keys.some((k) => k.startsWith('$')) && keys.length !== 1) throw new Error(`policy ${at}: an operator ($...) stands alone in its object`);
  const op = operatorOf(pattern);
  if (op === undefined) return Object.entries(pattern).forEach(([k, p]) => checkPattern(p, `${at}.${k}`));
  if (!OPERATORS.includes(op)) throw new Error(`policy ${at}: unknown operator ${op} (known: ${OPERATORS.join(', ')})`);
  const operand = pattern[op];
  if (op === '$in' && !Array.isArray(operand)) throw new Error(`policy ${at}: $in takes an array`);
  if (op === '$prefix' && typeof operand !== 'string') throw new Error(`policy ${at}: $prefix takes a string`);
  if (op === '$exists' && typeof operand !== 'boolean') throw new Error(`policy ${at}: $exists takes true or false`);
  if ((op === '$gte' || op === '$lte') && typeof operand !== 'number') throw new Error(`policy ${at}: ${op} takes a number`);
  if (op === '$any' || op === '$all' || op === '$not') checkPattern(operand, `${at}.${op}`);
}

const equal = (a: unknown, b: unknown): boolean => JSON.stringify(canonicalOrder(a)) === JSON.stringify(canonicalOrder(b));
function canonicalOrder(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonicalOrder);
  if (isObject(v)) return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonicalOrder(v[k])]));
  return v;
}

/** Whether a value matches a pattern (see the module's comment); `present` is false for a key the value lacks. */
export function matchesPattern(pattern: unknown, value: unknown, present = true): boolean {
  if (isObject(pattern)) {
    const op = operatorOf(pattern);
    if (op !== undefined) {
      const operand = pattern[op];
      switch (op) {
        case '$exists':
          return present === operand;
        case '$not':
          return !matchesPattern(operand, value, present);
        default:
          if (!present) return false;
      }
      switch (op) {
        case '$any':
          return Array.isArray(value) && value.some((v) => matchesPattern(operand, v));
        case '$all':
          return Array.isArray(value) && value.every((v) => matchesPattern(operand, v));
        case '$in':
          return (operand as unknown[]).some((v) => equal(v, value));
        case '$prefix':
          return typeof value === 'string' && value.startsWith(operand as string);
        case '$gte':
          return typeof value === 'number' && value >= (operand as number);
        case '$lte':
          return typeof value === 'number' && value <= (operand as number);
      }
    }
    if (!present || !isObject(value)) return false;
    return Object.entries(pattern).every(([k, p]) => matchesPattern(p, value[k], Object.prototype.hasOwnProperty.call(value, k)));
  }
  if (!present) return false;
  if (Array.isArray(pattern)) return Array.isArray(value) && value.length === pattern.length && pattern.every((p, i) => matchesPattern(p, value[i]));
  return equal(pattern, value);
}

/** The first rule that matches a call, or undefined (the call passes through). */
export function ruleFor(policy: ToolPolicy, call: { server: string; tool: string; arguments: Record<string, unknown> }): PolicyRule | undefined {
  return policy.rules.find(
    (rule) => (rule.server === undefined || rule.server === call.server) && (rule.tool === '*' || rule.tool === call.tool) && (rule.arguments === undefined || matchesPattern(rule.arguments, call.arguments)),
  );
}
