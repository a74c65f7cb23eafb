// Comparing a presented bearer secret with the configured one without leaking either through timing: the
// admin token check, and the stream API's check that says a presented token is the admin token.
const encoder = new TextEncoder();

/**
 * Compares digests, not the secrets: equal lengths for timingSafeEqual, and neither the secret's content
 * nor its length leaks through timing.
 */
export async function sameSecret(presented: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(presented)),
    crypto.subtle.digest("SHA-256", encoder.encode(expected)),
  ]);
  return crypto.subtle.timingSafeEqual(a, b);
}
