/**
 * The debate's documents say what its code does: OpenDebate's schema (generated into the JSON Schema,
 * AsyncAPI and OpenAPI documents), the budgets the decider derives, and docs/protocols/debate.md's list
 * of the live event names.
 */
import { readFileSync } from 'node:fs';
import { DEBATE_SSE_TYPES, DEFAULT_DEBATE_SETTINGS, DebateSettings, OpenDebate } from '@agora/contracts';
import { z } from 'zod';
import { cruxLockBudgetFor } from '../src/stages.js';

const described = (schema: z.ZodType) => (z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { description?: string }).description ?? '';

describe("the debate's documents agree with its code", () => {
  it("OpenDebate's settings name the defaults the decider uses, and CRUX_LOCK as following from the participants", () => {
    const settings = described((OpenDebate.payload as z.ZodObject).shape['settings'] as z.ZodType);
    const d = DEFAULT_DEBATE_SETTINGS;
    expect(settings).toContain(`DISCOVERY ${d.discovery.min}-${d.discovery.max}`);
    expect(settings).toContain(`EVIDENCE ${d.evidence.min}-${d.evidence.max}`);
    expect(settings).toContain(`${d.maxLockAttempts} lock attempts`);
    expect(settings).toContain(`orbiting above ${d.orbitingThreshold.toFixed(1)} over ${d.orbitingWindow} messages`);
    expect(settings).toContain(`horizon ratio ${d.horizonRatio}`);
    expect(settings).toContain('CRUX_LOCK from the participants');
  });

  it("cruxLock's description gives the budgets cruxLockBudgetFor derives", () => {
    const text = described(DebateSettings.shape.cruxLock);
    const budget = (n: number) => `${cruxLockBudgetFor(n).min}-${cruxLockBudgetFor(n).max}`;
    expect(text).toContain(`two agents: ${budget(2)}; three: ${budget(3)}`);
  });

  it("discovery's description says what its max does: the moderator frames the question, not a narrowing of the moves", () => {
    const text = described(DebateSettings.shape.discovery);
    expect(text).toMatch(/at max, without one, the moderator frames the question/);
    expect(text).not.toMatch(/only PROPOSE_QUESTION and ACCEPT_QUESTION remain/);
  });

  it('docs/protocols/debate.md lists every live event name the gateway streams', () => {
    const doc = readFileSync(new URL('../../../docs/protocols/debate.md', import.meta.url), 'utf8');
    const live = /- \*\*Live\*\*:([\s\S]*?)\n- \*\*/.exec(doc)![1]!;
    const missing = Object.values(DEBATE_SSE_TYPES).filter((name) => !live.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
