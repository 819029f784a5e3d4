/**
 * What the embedded store keeps in memory about its log instead of the events themselves: a few
 * bytes per commit and per event, so a log of millions of events costs tens of megabytes, and
 * events are read back from the file when asked for.
 */

/** A growable array of unsigned 32-bit integers or doubles, stored flat (no object per entry). */
export class NumberColumn {
  private data: Uint32Array | Float64Array;
  private count = 0;

  constructor(private readonly kind: 'u32' | 'f64') {
    this.data = kind === 'u32' ? new Uint32Array(1024) : new Float64Array(1024);
  }

  get length(): number {
    return this.count;
  }

  push(value: number): void {
    if (this.count === this.data.length) {
      const bigger = this.kind === 'u32' ? new Uint32Array(this.data.length * 2) : new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.count++] = value;
  }

  at(index: number): number {
    return this.data[index]!;
  }

  /** The entries as bytes, to save. */
  bytes(): Buffer {
    return Buffer.from(this.data.buffer, this.data.byteOffset, this.count * this.data.BYTES_PER_ELEMENT);
  }

  /** Replaces the entries with `count` entries saved by `bytes()`. */
  load(bytes: Buffer, count: number): void {
    const size = Math.max(1024, 2 ** Math.ceil(Math.log2(Math.max(1, count))));
    const copy = new Uint8Array(count * this.data.BYTES_PER_ELEMENT);
    copy.set(bytes.subarray(0, copy.length));
    this.data = this.kind === 'u32' ? new Uint32Array(size) : new Float64Array(size);
    this.data.set(this.kind === 'u32' ? new Uint32Array(copy.buffer) : new Float64Array(copy.buffer));
    this.count = count;
  }

  /** Index of the last entry <= `value`; the entries must be ascending. -1 when none. */
  floorIndex(value: number): number {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.data[mid]! <= value) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }
}

/**
 * Event id -> global index of the event, as a hash table of 64-bit hashes of the ids (12 bytes a
 * slot, open addressing). A hash says only "maybe": the caller confirms a candidate by reading the
 * event, so two ids with the same hash cost a read, never a wrong answer.
 */
export class EventIdIndex {
  private hashHi = new Uint32Array(1 << 12);
  private hashLo = new Uint32Array(1 << 12);
  /** Global index + 1; 0 is an empty slot. */
  private values = new Uint32Array(1 << 12);
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(id: string, eventIndex: number): void {
    if ((this.count + 1) * 2 > this.values.length) this.grow();
    const [hi, lo] = hash64(id);
    this.insert(hi, lo, eventIndex + 1);
    this.count++;
  }

  clear(): void {
    this.hashHi = new Uint32Array(1 << 12);
    this.hashLo = new Uint32Array(1 << 12);
    this.values = new Uint32Array(1 << 12);
    this.count = 0;
  }

  /** Global indexes of events whose id may be `id`, to confirm by reading them. */
  candidates(id: string): number[] {
    const [hi, lo] = hash64(id);
    const mask = this.values.length - 1;
    const found: number[] = [];
    for (let slot = lo & mask; this.values[slot] !== 0; slot = (slot + 1) & mask) {
      if (this.hashHi[slot] === hi && this.hashLo[slot] === lo) found.push(this.values[slot]! - 1);
    }
    return found;
  }

  /** The table as bytes, to save: capacity, then the three columns. */
  bytes(): Buffer[] {
    const head = Buffer.alloc(8);
    head.writeUInt32LE(this.values.length, 0);
    head.writeUInt32LE(this.count, 4);
    return [head, ...[this.hashHi, this.hashLo, this.values].map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength))];
  }

  /** Replaces the table with one saved by `bytes()`; returns the bytes it took. */
  load(buf: Buffer): number {
    const capacity = buf.readUInt32LE(0);
    if (capacity < 1 || (capacity & (capacity - 1)) !== 0) throw new Error(`bad id table capacity ${capacity}`);
    if (buf.length < 8 + 3 * capacity * 4) throw new Error('id table cut short');
    const column = (k: number) => {
      const copy = new Uint8Array(capacity * 4);
      copy.set(buf.subarray(8 + k * capacity * 4, 8 + (k + 1) * capacity * 4));
      return new Uint32Array(copy.buffer);
    };
    this.hashHi = column(0);
    this.hashLo = column(1);
    this.values = column(2);
    this.count = buf.readUInt32LE(4);
    return 8 + 3 * capacity * 4;
  }

  private insert(hi: number, lo: number, value: number): void {
    const mask = this.values.length - 1;
    let slot = lo & mask;
    while (this.values[slot] !== 0) slot = (slot + 1) & mask;
    this.hashHi[slot] = hi;
    this.hashLo[slot] = lo;
    this.values[slot] = value;
  }

  private grow(): void {
    const { hashHi, hashLo, values } = this;
    this.hashHi = new Uint32Array(values.length * 2);
    this.hashLo = new Uint32Array(values.length * 2);
    this.values = new Uint32Array(values.length * 2);
    for (let i = 0; i < values.length; i++) if (values[i] !== 0) this.insert(hashHi[i]!, hashLo[i]!, values[i]!);
  }
}

/** Two independent 32-bit FNV-1a style hashes of the string's UTF-16 code units. */
function hash64(s: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a ^= a >>> 13;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 16;
  return [a >>> 0, b >>> 0];
}
