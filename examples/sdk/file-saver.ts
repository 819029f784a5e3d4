import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { MemorySaver } from '@langchain/langgraph';

/** LangGraph's MemorySaver, kept in a JSON file after each write: a thread's checkpoints outlive the process. */
export class FileSaver extends MemorySaver {
  constructor(private readonly file: string) {
    super();
    if (!existsSync(file)) return;
    const saved = JSON.parse(readFileSync(file, 'utf8'), (_key, value) => (typeof value?.$bytes === 'string' ? new Uint8Array(Buffer.from(value.$bytes, 'base64')) : value));
    Object.assign(this, { storage: saved.storage, writes: saved.writes });
  }

  private save(): void {
    const bytes = function (this: Record<string, unknown>, key: string, value: unknown) {
      const raw = this[key];
      return raw instanceof Uint8Array ? { $bytes: Buffer.from(raw).toString('base64') } : value;
    };
    writeFileSync(`${this.file}.tmp`, JSON.stringify({ storage: this.storage, writes: this.writes }, bytes));
    renameSync(`${this.file}.tmp`, this.file);
  }

  override async put(...args: Parameters<MemorySaver['put']>) {
    const saved = await super.put(...args);
    this.save();
    return saved;
  }

  override async putWrites(...args: Parameters<MemorySaver['putWrites']>) {
    await super.putWrites(...args);
    this.save();
  }

  override async deleteThread(threadId: string) {
    await super.deleteThread(threadId);
    this.save();
  }
}
