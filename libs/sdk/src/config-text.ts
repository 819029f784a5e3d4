import { parse as parseYaml } from 'yaml';

/**
 * The text of a file people write by hand (a fleet file, a tool policy), as data for a zod schema to
 * check: YAML when the file is named `.yaml` or `.yml`, else JSON. A syntax error throws with the
 * line and column the parser names.
 */
export function parseConfigText(text: string, source: string): unknown {
  if (/\.ya?ml$/i.test(source)) {
    try {
      return parseYaml(text, { prettyErrors: true });
    } catch (error) {
      throw new SyntaxError(`not YAML: ${(error as Error).message}`, { cause: error });
    }
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new SyntaxError(`not JSON: ${(error as Error).message}`, { cause: error });
  }
}
