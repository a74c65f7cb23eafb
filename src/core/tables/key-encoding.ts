// The key encoding (rows K1..K5 of docs/tables.md): a key tuple of strings, safe integers and booleans as
// one printable-ASCII string whose order (by code unit, which for ASCII is also byte order, so SQLite's
// BINARY collation and R2 listings agree) is the order of the tuples. Each element is a type tag and a
// self-delimiting body, so a key's encoding starts with the encoding of each of its prefixes.
//
//   bool    `b` then `0` or `1`
//   int     `i` then value + 2^53 as 14 lowercase hex digits (fixed width: negatives sort first)
//   string  `s` then one token per UTF-16 code unit, then `!`:
//             0x30..0x7d (digits, letters, most punctuation) as itself,
//             below 0x30 as `#` and the character 0x30 + unit,
//             above 0x7d as `~` and 4 lowercase hex digits.
//           `!` < `#` < 0x30..0x7d < `~`, so the end of a string sorts before any continuation.

export type KeyValue = string | number | boolean;

const INT_OFFSET = 2 ** 53;
const INT_HEX_DIGITS = 14;
/** 2^52: the span of the 13 low hex digits. */
const LOW_BITS_SPAN = 2 ** 52;
const STRING_END = "!";
const LOW_ESCAPE = "#";
const HIGH_ESCAPE = "~";
const DIRECT_FIRST = 0x30;
const DIRECT_LAST = 0x7d;

/** K1..K4: the encoding of a key tuple. Ints must be safe integers (rows.ts checks before). */
export function encodeKey(values: readonly KeyValue[]): string {
  return values.map(encodeElement).join("");
}

function encodeElement(value: KeyValue): string {
  if (typeof value === "boolean") return value ? "b1" : "b0";
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new RangeError("key ints are safe integers");
    return `i${offsetHex(value)}`;
  }
  let body = "s";
  for (let index = 0; index < value.length; index++) body += encodeCodeUnit(value.charCodeAt(index));
  return body + STRING_END;
}

/**
 * value + 2^53 as INT_HEX_DIGITS hex digits, exactly. Adding in floating point would round: above 2^53 a
 * number holds only even integers, so 0 and 1 would both encode as 2^53. A negative value's sum is below
 * 2^53 and exact; a non-negative one is written as its top digit (2 + value / 2^52) and its low 52 bits.
 */
function offsetHex(value: number): string {
  if (value < 0) return (value + INT_OFFSET).toString(16).padStart(INT_HEX_DIGITS, "0");
  const high = Math.floor(value / LOW_BITS_SPAN);
  return (2 + high).toString(16) + (value - high * LOW_BITS_SPAN).toString(16).padStart(INT_HEX_DIGITS - 1, "0");
}

function encodeCodeUnit(unit: number): string {
  if (unit < DIRECT_FIRST) return LOW_ESCAPE + String.fromCharCode(DIRECT_FIRST + unit);
  if (unit <= DIRECT_LAST) return String.fromCharCode(unit);
  return HIGH_ESCAPE + unit.toString(16).padStart(4, "0");
}
