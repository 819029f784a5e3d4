/**
 * Runs tasks of the same key one after another, tasks of different keys concurrently. A service
 * replica serializes the commands it handles on one stream, so they do not fight each other with
 * optimistic-concurrency conflicts; only replicas in other processes can still collide.
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.catch(() => undefined).then(task);
    this.tails.set(key, current);
    try {
      return await current;
    } finally {
      if (this.tails.get(key) === current) this.tails.delete(key);
    }
  }

  /** Keys with a task running or waiting. */
  get size(): number {
    return this.tails.size;
  }
}
