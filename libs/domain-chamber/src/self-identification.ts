/**
 * Self-identification (seed 003: answers are shown to the other panelists and the arbiter under
 * anonymous labels). A model that names itself ("I am Claude, made by Anthropic") undoes the
 * labels, so what another model is shown has such names masked; the verbatim answer stays in the
 * log (ChamberCallCompleted), and how often it happened is a figure.
 *
 * A name is masked where the answer speaks of itself: in a sentence with a first-person word (I,
 * I'm, me, my, myself, we, our) or "as an AI / assistant / language model / LLM", a model or product
 * name, and a provider named as a maker ("made by Anthropic", "from OpenAI", "a Google model").
 * Elsewhere ("Google's revenue grew", "I think Google will win") a name is content and stays; a
 * first-person sentence that recommends a model by name ("I would use GPT-4 here") is masked too,
 * the price of not letting "I am GPT-4" through. Masked names become "[a model]" or "[a provider]".
 */

/** Model and product names (and families), matched as whole words, case-insensitive. */
export const MODEL_NAMES = [
  'ChatGPT',
  'GPT-?\\d[\\w.-]*',
  'GPT',
  'o[134](?:-mini|-pro)?',
  'Claude(?:[ -]\\d[\\w.]*)?',
  'Sonnet',
  'Opus',
  'Haiku',
  'Gemini(?:[ -]\\d[\\w.]*)?(?: (?:Pro|Flash|Ultra|Nano))?',
  'Bard',
  'PaLM',
  'Gemma',
  'Llama(?:[ -]?\\d[\\w.]*)?',
  'Mistral',
  'Mixtral',
  'Grok',
  'DeepSeek(?:[ -][\\w.]+)?',
  'Qwen',
  'Copilot',
  'Perplexity',
  'Command R\\+?',
] as const;

/** Provider names, matched as whole words, case-insensitive. */
export const PROVIDER_NAMES = ['Anthropic', 'OpenAI', 'Google DeepMind', 'Google', 'DeepMind', 'Meta AI', 'Meta', 'xAI', 'Mistral AI', 'Alibaba', 'Cohere', 'Microsoft'] as const;

const MODEL = new RegExp(`\\b(?:${MODEL_NAMES.join('|')})\\b`, 'gi');
const PROVIDERS = PROVIDER_NAMES.map((p) => p.replace(/ /g, '\\s+')).join('|');
/** A provider as the maker: "made by Anthropic", "from OpenAI", "a Google model", "OpenAI's assistant". */
const PROVIDER = new RegExp(`(\\b(?:by|from|at)\\s+)(${PROVIDERS})\\b|\\b(${PROVIDERS})(?=(?:'s)?\\s+(?:AI|model|assistant|LLM|language model|chatbot)\\b)`, 'gi');
const SELF = /\b(?:I|I'm|I've|I'd|me|my|myself|we|our|ours)\b|\bas an? (?:AI|assistant|language model|large language model|LLM|model|chatbot)\b/i;
/** Sentences, keeping their ends: split after . ! ? followed by a space or the end ("1.5" stays whole), or at a line break. */
const SENTENCE = /(?:[^.!?\n]|[.!?](?![\s.!?]|$))+(?:[.!?]+[ \t]*|\n+)?|[.!?\n]+[ \t]*/g;

export interface Masked {
  text: string;
  /** The names masked, as written, in order. */
  masked: string[];
}

/** The text with its self-identifying names masked (see the header), and which names were. */
export function maskSelfIdentification(text: string): Masked {
  const masked: string[] = [];
  const out = (text.match(SENTENCE) ?? []).map((sentence) => {
    if (!SELF.test(sentence)) return sentence;
    return sentence
      .replace(MODEL, (name) => {
        masked.push(name);
        return '[a model]';
      })
      .replace(PROVIDER, (_all, by: string | undefined, afterBy: string | undefined, before: string | undefined) => {
        masked.push((afterBy ?? before)!);
        return `${by ?? ''}[a provider]`;
      });
  });
  return { text: masked.length === 0 ? text : out.join(''), masked };
}

/** Whether an answer's text fields name their author anywhere: what the figure counts. */
export function selfIdentifies(texts: readonly string[]): boolean {
  return texts.some((t) => maskSelfIdentification(t).masked.length > 0);
}
