/**
 * Per-account sign-in throttling: after 10 failed sign-ins to one account within 15 minutes, further
 * attempts on that account are refused (429 RATE_LIMITED, `Retry-After`) until the window has passed,
 * whatever the password and wherever they come from, so that guessing one account's password from many
 * addresses gets no further than the per-address budget allows from one. A successful sign-in clears
 * the count. The counts are kept by each gateway instance.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../errors.js';

export const SIGNIN_FAILURES = 10;
export const SIGNIN_WINDOW_SECONDS = 15 * 60;

export class SigninThrottle {
  private readonly failures = new RateLimiterMemory({ keyPrefix: 'signin-failures', points: SIGNIN_FAILURES, duration: SIGNIN_WINDOW_SECONDS });

  /** Throws RATE_LIMITED while the account has used up its failures. */
  async check(email: string): Promise<void> {
    const res = await this.failures.get(email);
    if (res && res.consumedPoints >= SIGNIN_FAILURES) throw refused(res);
  }

  async failed(email: string): Promise<void> {
    await this.failures.penalty(email, 1);
  }

  async succeeded(email: string): Promise<void> {
    await this.failures.delete(email);
  }
}

function refused(res: RateLimiterRes): AppError {
  const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return new AppError('RATE_LIMITED', `Too many failed sign-ins to this account. Try again in ${retryAfter} seconds, or reset the password.`, { retryAfter });
}
