// IdMap and IdSet: a Map and a Set of entry ids that keep ids of the same hash apart.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IdMap, IdSet, idHash } from '../../src/core/id-map';

/** Two ids of the same hash (found among `e0`, `e1`, ...: 30 bits collide within ~100,000). */
function collidingIds(): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; ; i++) {
    const id = `e${i}`;
    const other = seen.get(idHash(id));
    if (other !== undefined) return [other, id];
    seen.set(idHash(id), id);
  }
}

/** A repeatable sequence of numbers in [0, 1). */
function random(seed: number): () => number {
  return () => ((seed = Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32;
}

describe('IdMap', () => {
  it('keeps ids of the same hash apart', () => {
    const [a, b] = collidingIds();
    assert.equal(idHash(a), idHash(b));
    const map = new IdMap<string>([
      [a, 'first'],
      [b, 'second'],
    ]);
    assert.equal(map.size, 2);
    assert.equal(map.get(a), 'first');
    assert.equal(map.get(b), 'second');
    assert.equal(map.delete(a), true);
    assert.equal(map.has(a), false);
    assert.equal(map.get(b), 'second', 'the other id of its hash stays');
    assert.equal(map.delete(a), false);
    map.set(a, 'again').set(b, 'changed');
    assert.deepEqual(
      new Map(map),
      new Map([
        [a, 'again'],
        [b, 'changed'],
      ]),
    );
  });

  it('holds what a Map holds after the same 20,000 random changes', () => {
    const next = random(43);
    const ids = Array.from({ length: 2000 }, (_, i) => `id-${i}`);
    const map = new IdMap<number>();
    const expected = new Map<string, number>();
    for (let step = 0; step < 20_000; step++) {
      const id = ids[Math.floor(next() * ids.length)]!;
      if (next() < 0.3) assert.equal(map.delete(id), expected.delete(id), `delete ${id}`);
      else {
        map.set(id, step);
        expected.set(id, step);
      }
      assert.equal(map.get(id), expected.get(id));
    }
    assert.equal(map.size, expected.size);
    assert.deepEqual(new Map(map), expected);
    assert.deepEqual(new Set([...map].map(([id]) => id)), new Set(expected.keys()));
    map.clear();
    assert.equal(map.size, 0);
    assert.equal([...map].length, 0);
  });
});

describe('IdSet', () => {
  it('adds each id once, ids of the same hash apart', () => {
    const [a, b] = collidingIds();
    const set = new IdSet([a, b, a]);
    assert.equal(set.size, 2);
    assert.deepEqual(new Set(set), new Set([a, b]));
    set.delete(b);
    assert.equal(set.has(a), true);
    assert.equal(set.has(b), false);
    set.add(b).add(b);
    assert.equal(set.size, 2);
  });
});
