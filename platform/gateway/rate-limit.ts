/** Requests allowed per minute for each route family, per user (JWT `sub`) or client address. */
export const RATE_LIMITS = { rest: 200, auth: 60, functions: 500 } as const;

/** A route family with a per-minute budget. */
export type LimitedRoute = keyof typeof RATE_LIMITS;

/** Outcome of counting one request against its budget. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (the Retry-After value when refused). */
  resetSeconds: number;
}

/**
 * Fixed one-minute windows per (route family, caller). The counters live in the gateway's memory:
 * the local platform has exactly one gateway, so they are exact; hosted Supabase enforces its own.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { startedAt: number; count: number }>();

  constructor(
    private readonly limits: Record<LimitedRoute, number> = RATE_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts a request and says whether it fits in the caller's current window. */
  hit(route: LimitedRoute, caller: string): RateDecision {
    const key = `${route}:${caller}`;
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || now - window.startedAt >= 60_000) {
      window = { startedAt: now, count: 0 };
      this.windows.set(key, window);
      this.evictExpired(now);
    }
    window.count += 1;
    const limit = this.limits[route];
    return {
      allowed: window.count <= limit,
      limit,
      remaining: Math.max(0, limit - window.count),
      resetSeconds: Math.max(1, Math.ceil((window.startedAt + 60_000 - now) / 1000)),
    };
  }

  private evictExpired(now: number): void {
    if (this.windows.size < 10_000) return;
    for (const [key, window] of this.windows) if (now - window.startedAt >= 60_000) this.windows.delete(key);
  }
}
