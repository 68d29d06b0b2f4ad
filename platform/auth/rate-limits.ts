import { AuthError } from "./errors.ts";
import type { RateLimitSettings } from "./settings.ts";

/** The request families GoTrue meters per client address, each with a bucket of its own. */
export type LimitedAction = "otp" | "magiclink" | "recover" | "resend" | "verify" | "anonymous" | "factor_challenge" | "factor_verify";

interface Bucket {
  tokens: number;
  updatedAt: number;
}

interface Rate {
  /** Tokens added per millisecond. */
  perMs: number;
  burst: number;
}

/** GoTrue's MFA challenge-and-verify limit, which config.toml does not expose (15 a minute). */
const MFA_PER_MINUTE = 15;

/**
 * GoTrue's per-address limits (tollbooth token buckets), with `[auth.rate_limit]`'s numbers: OTP,
 * magic-link, recovery and resend requests share `sign_in_sign_ups` per 5 minutes (burst 30, a
 * bucket each), /verify `token_verifications` per 5 minutes (burst 30), anonymous sign-ins
 * `anonymous_users` per hour (burst of as many). Hosted GoTrue meters by the client address the
 * platform forwards; here that is the gateway's X-Forwarded-For.
 */
export class AuthRateLimits {
  private readonly buckets = new Map<string, Bucket>();
  private readonly rates: Record<LimitedAction, Rate>;

  constructor(settings: RateLimitSettings, private readonly now: () => number = Date.now) {
    const per5Minutes = (events: number): Rate => ({ perMs: events / 300_000, burst: 30 });
    this.rates = {
      otp: per5Minutes(settings.signInSignUps),
      magiclink: per5Minutes(settings.signInSignUps),
      recover: per5Minutes(settings.signInSignUps),
      resend: per5Minutes(settings.signInSignUps),
      verify: per5Minutes(settings.tokenVerifications),
      anonymous: { perMs: settings.anonymousUsers / 3_600_000, burst: settings.anonymousUsers },
      factor_challenge: { perMs: MFA_PER_MINUTE / 60_000, burst: 30 },
      factor_verify: { perMs: MFA_PER_MINUTE / 60_000, burst: 30 },
    };
  }

  /** Takes one token for `address`; 429 over_request_rate_limit when its bucket is empty. */
  take(action: LimitedAction, address: string | null): void {
    if (address === null) return;
    const rate = this.rates[action];
    const key = `${action}:${address}`;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: rate.burst, updatedAt: now };
    bucket.tokens = Math.min(rate.burst, bucket.tokens + (now - bucket.updatedAt) * rate.perMs);
    bucket.updatedAt = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens < 1) throw new AuthError(429, "over_request_rate_limit", "Request rate limit reached");
    bucket.tokens -= 1;
    if (this.buckets.size > 10_000) this.evictFull(now);
  }

  /** Forgets buckets that have refilled completely (they would start full anyway). */
  private evictFull(now: number): void {
    for (const [key, bucket] of this.buckets) {
      const rate = this.rates[key.slice(0, key.indexOf(":")) as LimitedAction];
      if (bucket.tokens + (now - bucket.updatedAt) * rate.perMs >= rate.burst) this.buckets.delete(key);
    }
  }
}
