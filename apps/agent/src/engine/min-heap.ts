/**
 * A binary min-heap of small integer ids keyed by a number (the next intended send time of each
 * connection). Parallel arrays instead of objects: at tens of thousands of connections the send
 * loop pops and pushes once per message, and allocation per message would feed the GC.
 */
export class MinHeap {
  private ids: number[] = [];
  private keys: number[] = [];

  get size(): number {
    return this.ids.length;
  }

  peekKey(): number {
    return this.keys.length ? this.keys[0]! : Infinity;
  }

  /** The second smallest key (Infinity with fewer than two): one of the root's children. */
  peekSecondKey(): number {
    const keys = this.keys;
    return Math.min(keys[1] ?? Infinity, keys[2] ?? Infinity);
  }

  push(id: number, key: number): void {
    const ids = this.ids,
      keys = this.keys;
    let i = ids.length;
    ids.push(id);
    keys.push(key);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (keys[parent]! <= key) break;
      ids[i] = ids[parent]!;
      keys[i] = keys[parent]!;
      i = parent;
    }
    ids[i] = id;
    keys[i] = key;
  }

  /** Removes and returns the id with the smallest key; undefined when empty. */
  pop(): number | undefined {
    const ids = this.ids,
      keys = this.keys;
    if (ids.length === 0) return undefined;
    const top = ids[0]!;
    const lastId = ids.pop()!;
    const lastKey = keys.pop()!;
    const n = ids.length;
    if (n === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && keys[r]! < keys[l]! ? r : l;
      if (keys[c]! >= lastKey) break;
      ids[i] = ids[c]!;
      keys[i] = keys[c]!;
      i = c;
    }
    ids[i] = lastId;
    keys[i] = lastKey;
    return top;
  }

  clear(): void {
    this.ids = [];
    this.keys = [];
  }
}
