import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProposalView } from '@agora/contracts';
import { ask, PROMPT_NAMES, Prompts, renderTemplate, reviewProblem, reviewValues, type ModelCalls, type ModelCallRequest, type ModelReview } from '../src/index.js';

const proposal = {
  proposalId: 'p-1',
  proposer: 'seldon',
  revision: 2,
  title: 'Switch providers',
  problem: 'Failures',
  body: 'Switch on Monday.',
  evidence: [{ ref: 'd/7c1e2a90', summary: '2.1% of payments failed' }],
  objections: [{ objectionId: 'r1-risk', constitution: 'risk', round: 1, status: 'answered', constraint: 'A way back.', scenario: 'It fails.', suggestedRevision: 'Add a rollback.' }],
} as unknown as ProposalView;

describe('prompts', () => {
  it('fills placeholders, and refuses a template that uses one it is not given', () => {
    expect(renderTemplate('Hello {{name}}, {{ n }} left', { name: 'seldon', n: 3 })).toBe('Hello seldon, 3 left');
    expect(() => renderTemplate('{{name}} {{typo}} {{other}}', { name: 'x' }, 'prompt reviewer.md')).toThrow('prompt reviewer.md uses {{typo}}, {{other}}, which it is not given (it is given: name)');
  });

  it('ships a prompt for every role and turn, and a mandate per default constitution, each filled by its role', () => {
    const prompts = new Prompts();
    expect(() => prompts.check(['risk', 'premise', 'evidence', 'execution'])).not.toThrow();
    const system = prompts.render('reviewer', { agent: 'harbinger', constitution: 'risk', mandate: prompts.mandate('risk') });
    expect(system).toMatch(/^You are harbinger, a constitutional reviewer/);
    expect(system).toMatch(/Risk analysis: what breaks, and when\?/);
    const request = prompts.render('review-request', reviewValues(proposal, 2, 'risk'));
    expect(request).toContain('Proposal p-1, revision 2, by seldon; review round 2.');
    expect(request).toContain('--- plan ---\nSwitch on Monday.\n--- end of plan ---');
    expect(request).toContain('- d/7c1e2a90: 2.1% of payments failed');
    expect(request).toContain('- r1-risk (risk, round 1, answered): A way back. Scenario: It fails. Suggested: Add a rollback.');
    expect(() => prompts.mandate('astrology')).toThrow(/no prompt constitutions\/astrology\.md/);
  });

  it('takes a file from the override directory over the shipped one, the rest from the package', () => {
    const dir = mkdtempSync(join(tmpdir(), 'prompts-'));
    mkdirSync(join(dir, 'constitutions'));
    writeFileSync(join(dir, 'validator.md'), 'You are {{agent}}; judge as {{specializations}}.\n');
    writeFileSync(join(dir, 'constitutions', 'astrology.md'), 'Read the stars.');
    const prompts = new Prompts(dir);
    expect(prompts.render('validator', { agent: 'aegis', specializations: 'security' })).toBe('You are aegis; judge as security.');
    expect(prompts.mandate('astrology')).toBe('Read the stars.');
    expect(prompts.pathOf('thesis.md')).toBe(join(new Prompts().shipped, 'thesis.md'));
    writeFileSync(join(dir, 'thesis.md'), 'Thesis for {{sesion}}');
    expect(() => new Prompts(dir).render('thesis', { sessionId: 's', session: '' })).toThrow(/prompt thesis\.md uses \{\{sesion\}\}/);
    // Found before the fleet starts, naming the file.
    expect(() => new Prompts(dir).check([])).toThrow(`prompt thesis.md (${join(dir, 'thesis.md')}) uses {{sesion}}, which it is not given (it is given: sessionId, session)`);
    expect(PROMPT_NAMES).toContain('retry');
  });
});

describe('asking a model for an answer that fits', () => {
  const review: ModelReview = { verdict: 'object', reasoning: 'No way back.', citations: [], constraint: 'A way back.', scenario: 'It fails.', suggestedRevision: null, rejectReason: null };

  function scripted(answers: ((request: ModelCallRequest<unknown>) => unknown)[]): ModelCalls & { requests: ModelCallRequest<unknown>[] } {
    const requests: ModelCallRequest<unknown>[] = [];
    return {
      requests,
      async call<T>(request: ModelCallRequest<T>) {
        requests.push(request as ModelCallRequest<unknown>);
        const answer = answers[requests.length - 1]!(request as ModelCallRequest<unknown>);
        const common = { model: 'openai:gpt-4.1', provider: 'openai', attempts: 1, latencyMs: 5, usage: { inputTokens: 10, outputTokens: 5 }, cost: 0.001, retried: [], replayed: false };
        if (answer instanceof Error) return { ...common, ok: false, error: { kind: 'invalid_output', message: answer.message, text: '{"verdict":"maybe"}', retryable: false } } as never;
        return { ...common, ok: true, text: JSON.stringify(answer), output: answer as T, responseModel: 'gpt-4.1', finishReason: 'stop' };
      },
    };
  }
  const settings = (calls: ModelCalls) => ({ agentId: 'harbinger', model: 'openai:gpt-4.1', calls, prompts: new Prompts() });
  const question = { key: 'review:p-1:1:risk:harbinger', purpose: 'review p-1', system: 'system', prompt: 'Review it.', schema: {} as never, schemaName: 'review', check: (r: ModelReview) => reviewProblem(r, proposal) };

  it('asks once more, saying why, when the first answer breaks the contract; the call ids are derived from the key and the attempt', async () => {
    const calls = scripted([() => review, () => ({ ...review, suggestedRevision: 'Add a rollback.', citations: [{ ref: 'd/7c1e2a90', summary: '2.1% failed' }] })]);
    const asked = await ask(settings(calls), question);
    expect(asked).toMatchObject({ ok: true, calls: 2, cost: 0.002, output: { suggestedRevision: 'Add a rollback.' } });
    expect(calls.requests[1]!.prompt).toMatch(/^Review it\.\n\nYour previous answer could not be used: an objection must give suggestedRevision or rejectReason/);
    expect(calls.requests[1]!.purpose).toBe('review p-1 (retry)');
    expect(new Set(calls.requests.map((r) => r.callId)).size).toBe(2);
    const again = scripted([() => review, () => review]);
    await ask(settings(again), question);
    expect(again.requests.map((r) => r.callId)).toEqual(calls.requests.map((r) => r.callId));
  });

  it('gives up after the retry, with the reason: no invented answer', async () => {
    const asked = await ask(settings(scripted([() => new Error('No object generated: response did not match schema.'), () => ({ ...review, citations: [], suggestedRevision: 'Add a rollback.' })])), question);
    expect(asked).toEqual({ ok: false, calls: 2, cost: 0.002, error: 'no answer that fits after 2 attempts: the proposal gives evidence: an objection cites the items it relies on (citations)' });
  });
});
