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

  /**
   * Takes one of the account's tries before its password is checked, or throws RATE_LIMITED when they
   * are used up. A try is counted before the (slow) check, so sign-ins sent at once get no more tries
   * than sign-ins sent one by one; a success gives them all back (`succeeded`), a failure keeps its.
   */
  async attempt(email: string): Promise<void> {
    try {
      await this.failures.consume(email, 1);
    } catch (err) {
      if (err instanceof RateLimiterRes) throw refused(err);
      throw err;
    }
  }

  async succeeded(email: string): Promise<void> {
    await this.failures.delete(email);
  }
}

function refused(res: RateLimiterRes): AppError {
  const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  return new AppError('RATE_LIMITED', `Too many failed sign-ins to this account. Try again in ${retryAfter} seconds, or reset the password.`, { retryAfter });
}
