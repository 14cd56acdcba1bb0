/**
 * Unscaled decimal values as big-endian two's-complement bytes (Avro's decimal on bytes and fixed, Iceberg's
 * decimal in binary form). The minimal form is what Java's BigInteger.toByteArray() gives, so what Avro's
 * Java DecimalConversion, avsc users and Confluent's serializers write for `bytes` decimals.
 */

/** The signed big-endian two's-complement integer in `bytes` (0 for no bytes). */
export function bytesToBigInt(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  const first = bytes[0] as number;
  return first & 0x80 ? n - (1n << BigInt(bytes.length * 8)) : n;
}

/**
 * `n` as big-endian two's complement: the fewest bytes (at least one) when `size` is undefined, else exactly
 * `size` bytes, sign-extended; undefined when it does not fit in `size`.
 */
export function bigIntToBytes(n: bigint, size?: number): Uint8Array | undefined {
  let len = 1;
  while (n < -(1n << BigInt(len * 8 - 1)) || n >= 1n << BigInt(len * 8 - 1)) len++;
  if (size !== undefined) {
    if (len > size) return undefined;
    len = size;
  }
  const out = new Uint8Array(len);
  let v = BigInt.asUintN(len * 8, n);
  for (let i = len - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}
