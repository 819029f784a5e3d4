/** The operator key of this page: loaded from a key file into memory only, forgotten on reload or on request. */
import { useEffect, useState } from 'preact/hooks';
import type { OperatorKey } from './signing';

let current: OperatorKey | undefined;
const listeners = new Set<(key: OperatorKey | undefined) => void>();

export function setOperatorKey(key: OperatorKey | undefined): void {
  current = key;
  for (const l of [...listeners]) l(key);
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
