/** The operator key of this page: loaded from a key file into memory only, forgotten on reload or on request. */
import { useEffect, useState } from 'preact/hooks';
import { loadOperatorKey, type OperatorKey } from './signing';

let current: OperatorKey | undefined;
const listeners = new Set<(key: OperatorKey | undefined) => void>();

export function setOperatorKey(key: OperatorKey | undefined): void {
  current = key;
  for (const l of [...listeners]) l(key);
}

/** The key in memory now (outside a component). */
export function currentOperatorKey(): OperatorKey | undefined {
  return current;
}

export function useOperatorKey(): OperatorKey | undefined {
  const [key, setKey] = useState(current);
  useEffect(() => {
    listeners.add(setKey);
    setKey(current);
    return () => void listeners.delete(setKey);
  }, []);
  return key;
}

/**
 * The key of the file chosen in `input` (for `agentId`, when the file names none), read into
 * memory; the input is then emptied, so it keeps no reference to the file. Throws with a reason a
 * person can act on.
 */
export async function readKeyFile(input: HTMLInputElement | null, agentId: string): Promise<OperatorKey> {
  const chosen = input?.files?.[0];
  if (!chosen) throw new Error('Choose your key file first.');
  try {
    return await loadOperatorKey(await chosen.text(), agentId.trim() || undefined);
  } finally {
    if (input) input.value = '';
  }
}
