// The simulation's only source of randomness: xoshiro128** (Blackman and Vigna), seeded through splitmix32,
// so a seed names one run exactly. `fork` derives an independent generator (for the nodes' own draws, the
// replaced Math.random), so a change in how often one consumer draws does not reshuffle the others.

export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = (): number => {
      // splitmix32
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    if ((this.a | this.b | this.c | this.d) === 0) this.d = 1;
  }

  /** A uniform 32-bit unsigned integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** A uniform draw in [0, 1). */
  float(): number {
    return this.nextU32() / 4294967296;
  }

  /** A uniform integer in [0, n). */
  below(n: number): number {
    if (!Number.isSafeInteger(n) || n <= 0) throw new RangeError(`below(${n})`);
    return Math.floor(this.float() * n);
  }

  /** A uniform integer in [min, max]. */
  between(min: number, max: number): number {
    return min + this.below(max - min + 1);
  }

  chance(p: number): boolean {
    return p > 0 && this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("pick from an empty list");
    return items[this.below(items.length)]!;
  }

  /** An index drawn with the given weights (all ≥ 0, at least one > 0). */
  weighted(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    if (!(total > 0)) throw new RangeError("weighted: no positive weight");
    let x = this.float() * total;
    for (let i = 0; i < weights.length; i++) {
      x -= weights[i]!;
      if (x < 0 && weights[i]! > 0) return i;
    }
    for (let i = weights.length - 1; i >= 0; i--) if (weights[i]! > 0) return i;
    return 0;
  }

  /** An independent generator derived from this one. */
  fork(): Prng {
    return new Prng(this.nextU32());
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
