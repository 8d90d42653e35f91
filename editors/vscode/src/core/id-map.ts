// Maps and sets keyed by an entry's id whose ids V8 does not internalize. V8 puts a string
// used as a Map's key, a Set's member or an object's property name in its string table (once
// there, for as long as the string lives), and every major GC walks that table as roots when
// it updates pointers after moving objects: the page's index of a chat scrolled through
// 100,000 entries put ~93,000 ids there, and the walk grew to 12 ms of each pause (issue 43).
// Here the inner Map's keys are numbers (a hash of the id) and ids that share one are told
// apart by comparison, which internalizes nothing. Pure TypeScript: the page's and the host's.

/** One id and its value; `next`: another id of the same hash. */
interface Slot<V> {
  id: string;
  value: V;
  next: Slot<V> | undefined;
}

/** The key of an id in the maps: FNV-1a of its UTF-16 units, kept to 30 bits (a small integer: no boxed number as key). */
export function idHash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h & 0x3fffffff;
}

/** A Map from entry ids to values (the subset of Map's methods the chat uses). */
export class IdMap<V> implements Iterable<[string, V]> {
  private readonly buckets = new Map<number, Slot<V>>();
  private count = 0;

  constructor(pairs?: Iterable<readonly [string, V]>) {
    if (pairs) for (const [id, value] of pairs) this.set(id, value);
  }

  get size(): number {
    return this.count;
  }

  get(id: string): V | undefined {
    for (let slot = this.buckets.get(idHash(id)); slot; slot = slot.next) if (slot.id === id) return slot.value;
    return undefined;
  }

  has(id: string): boolean {
    for (let slot = this.buckets.get(idHash(id)); slot; slot = slot.next) if (slot.id === id) return true;
    return false;
  }

  set(id: string, value: V): this {
    const key = idHash(id);
    const first = this.buckets.get(key);
    for (let slot = first; slot; slot = slot.next) {
      if (slot.id === id) {
        slot.value = value;
        return this;
      }
    }
    this.buckets.set(key, { id, value, next: first });
    this.count++;
    return this;
  }

  delete(id: string): boolean {
    const key = idHash(id);
    let before: Slot<V> | undefined;
    for (let slot = this.buckets.get(key); slot; before = slot, slot = slot.next) {
      if (slot.id !== id) continue;
      if (before) before.next = slot.next;
      else if (slot.next) this.buckets.set(key, slot.next);
      else this.buckets.delete(key);
      this.count--;
      return true;
    }
    return false;
  }

  clear(): void {
    this.buckets.clear();
    this.count = 0;
  }

  *[Symbol.iterator](): Iterator<[string, V]> {
    for (const first of this.buckets.values())
      for (let slot: Slot<V> | undefined = first; slot; slot = slot.next) yield [slot.id, slot.value];
  }
}

/** Whether an IdSet bucket (an id, or the ids of one hash) holds `id`. */
function holds(bucket: string | string[] | undefined, id: string): boolean {
  return bucket === id || (typeof bucket === 'object' && bucket.includes(id));
}

/** A Set of entry ids (the subset of Set's methods the chat uses). */
export class IdSet implements Iterable<string> {
  /** By hash: the id, or the ids of that hash (rare). */
  private readonly buckets = new Map<number, string | string[]>();
  private count = 0;

  constructor(ids?: Iterable<string>) {
    if (ids) for (const id of ids) this.add(id);
  }

  get size(): number {
    return this.count;
  }

  has(id: string): boolean {
    return holds(this.buckets.get(idHash(id)), id);
  }

  add(id: string): this {
    const key = idHash(id);
    const bucket = this.buckets.get(key);
    if (bucket === undefined) this.buckets.set(key, id);
    else if (holds(bucket, id)) return this;
    else if (typeof bucket === 'string') this.buckets.set(key, [bucket, id]);
    else bucket.push(id);
    this.count++;
    return this;
  }

  delete(id: string): boolean {
    const key = idHash(id);
    const bucket = this.buckets.get(key);
    if (bucket === id) this.buckets.delete(key);
    else if (typeof bucket === 'object' && bucket.includes(id)) {
      const rest = bucket.filter((other) => other !== id);
      this.buckets.set(key, rest.length === 1 ? rest[0]! : rest);
    } else return false;
    this.count--;
    return true;
  }

  clear(): void {
    this.buckets.clear();
    this.count = 0;
  }

  /** The ids, in no set order (a list: iterating a generator cost ~5x as much). */
  list(): string[] {
    const ids: string[] = [];
    for (const bucket of this.buckets.values()) {
      if (typeof bucket === 'string') ids.push(bucket);
      else ids.push(...bucket);
    }
    return ids;
  }

  [Symbol.iterator](): Iterator<string> {
    return this.list()[Symbol.iterator]();
  }
}
