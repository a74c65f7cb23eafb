// The deployment's webhook signing key, kept in the subscription storage: generated on first use (`jwks`,
// a view, or the first webhook), then the stored one forever (until rotated). The oldest stored key signs,
// so every node advertises and signs with the same kid. How keys are made and used is a parameter: WebCrypto
// Ed25519 by default (src/subscriptions/webhook-signing.ts); the simulation passes a synchronous stand-in so
// no thread-pool work escapes its scheduler.
import type { WebhookJwks } from "../../ports/meta-log-client.ts";
import {
  createWebhookSigner,
  generateWebhookSigningKey,
  webhookJwks,
  type StoredSigningKey,
  type WebhookSigner,
} from "../../subscriptions/webhook-signing.ts";
import type { SubscriptionStorage } from "./subscription-storage.ts";

export interface WebhookKeyMaker {
  generate(): Promise<StoredSigningKey>;
  signer(stored: StoredSigningKey): Promise<WebhookSigner>;
}

export const WEBCRYPTO_KEYS: WebhookKeyMaker = { generate: generateWebhookSigningKey, signer: createWebhookSigner };

export class SigningKeys {
  private signer: Promise<WebhookSigner> | null = null;

  constructor(
    private readonly storage: SubscriptionStorage,
    private readonly maker: WebhookKeyMaker,
    private readonly now: () => number,
  ) {}

  async jwks(): Promise<WebhookJwks> {
    await this.current();
    return webhookJwks(this.storage.keys());
  }

  /** The signer of the oldest stored key, generating one first if none is stored. */
  current(): Promise<WebhookSigner> {
    this.signer ??= this.loadOrGenerate().catch((error: unknown) => {
      this.signer = null;
      throw error;
    });
    return this.signer;
  }

  private async loadOrGenerate(): Promise<WebhookSigner> {
    let stored = this.storage.keys()[0];
    if (stored === undefined) {
      const generated = await this.maker.generate();
      // Re-read after the await: the oldest stored key wins, so every caller signs with the same kid.
      this.storage.addKey(generated, this.now());
      stored = this.storage.keys()[0] ?? generated;
    }
    return this.maker.signer(stored);
  }
}
