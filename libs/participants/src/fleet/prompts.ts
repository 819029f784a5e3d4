/**
 * The participants' prompts: Markdown files a user can read and change. The package ships them in
 * `prompts/` (one file per role and turn, `constitutions/<name>.md` for each reviewer's mandate); a
 * fleet file may name a directory whose files replace the shipped ones of the same name. A prompt
 * holds `{{name}}` placeholders, filled in by the role: a placeholder the role does not give is an
 * error (a typo in an edited prompt is found at once, not sent to a model).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The prompts shipped with the package (next to src/ and dist/). */
export const SHIPPED_PROMPTS_DIR = fileURLToPath(new URL('../../prompts/', import.meta.url));

/** The prompt files the roles read (constitution mandates besides), each with the placeholders its role fills in. */
export const PROMPT_PLACEHOLDERS = {
  reviewer: ['agent', 'constitution', 'mandate'],
  'review-request': ['proposalId', 'revision', 'proposer', 'round', 'constitution', 'title', 'problem', 'body', 'evidence', 'objections'],
  executive: ['agent'],
  'revise-request': ['proposalId', 'revision', 'nextRevision', 'title', 'problem', 'body', 'objections'],
  validator: ['agent', 'specializations'],
  'vote-request': ['sessionId', 'requester', 'actionType', 'riskLevel', 'critical', 'summary', 'toolCall', 'validators', 'specializations'],
  dialectic: ['agent'],
  thesis: ['sessionId', 'session'],
  antithesis: ['sessionId', 'session', 'pausedAgent'],
  synthesis: ['sessionId', 'session', 'round', 'party', 'otherPosition'],
  retry: ['error'],
} as const satisfies Record<string, readonly string[]>;
export type PromptName = keyof typeof PROMPT_PLACEHOLDERS;
export const PROMPT_NAMES = Object.keys(PROMPT_PLACEHOLDERS) as PromptName[];

const PLACEHOLDER = /\{\{\s*([a-zA-Z][a-zA-Z0-9_]*)\s*\}\}/g;

/** Fills a template's `{{name}}` placeholders; throws naming the placeholders it was not given. */
export function renderTemplate(template: string, values: Readonly<Record<string, string | number>>, what = 'prompt'): string {
  const missing = [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!).filter((name) => !(name in values)))];
  if (missing.length > 0) throw new Error(`${what} uses ${missing.map((m) => `{{${m}}}`).join(', ')}, which it is not given (it is given: ${Object.keys(values).join(', ') || 'nothing'})`);
  return template.replace(PLACEHOLDER, (_, name: string) => String(values[name]));
}

export class Prompts {
  private readonly cache = new Map<string, string>();

  /** `overrides`: a directory whose files replace the shipped ones of the same name (`reviewer.md`, `constitutions/risk.md`). */
  constructor(
    readonly overrides?: string,
    readonly shipped: string = SHIPPED_PROMPTS_DIR,
  ) {}

  /** Where a prompt file is read from: the override when there is one, else the shipped file. */
  pathOf(file: string): string | undefined {
    for (const dir of this.overrides ? [this.overrides, this.shipped] : [this.shipped]) {
      const path = join(dir, file);
      if (existsSync(path)) return path;
    }
    return undefined;
  }

  private read(file: string): string {
    let text = this.cache.get(file);
    if (text === undefined) {
      const path = this.pathOf(file);
      if (!path) throw new Error(`no prompt ${file} (looked in ${this.overrides ? `${this.overrides} and ` : ''}${this.shipped})`);
      text = readFileSync(path, 'utf8').trimEnd();
      this.cache.set(file, text);
    }
    return text;
  }

  render(name: PromptName, values: Readonly<Record<string, string | number>>): string {
    return renderTemplate(this.read(`${name}.md`), values, `prompt ${name}.md`);
  }

  /** The mandate of a constitution (`constitutions/<name>.md`); throws when there is none, so a reviewer without one never starts. */
  mandate(constitution: string): string {
    return this.read(join('constitutions', `${constitution}.md`));
  }

  /** Reads every prompt the roles use (and the mandates of `constitutions`), so a missing file or an unknown placeholder stops the fleet before it starts. */
  check(constitutions: readonly string[]): void {
    for (const name of PROMPT_NAMES) renderTemplate(this.read(`${name}.md`), Object.fromEntries(PROMPT_PLACEHOLDERS[name].map((p) => [p, ''])), `prompt ${name}.md (${this.pathOf(`${name}.md`)})`);
    for (const c of constitutions) this.mandate(c);
  }
}
